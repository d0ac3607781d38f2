// Links between GPUs and the collective library's job, for the bindings.
#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "collective/collective.hpp"
#ifdef BWPROF_WITH_GPU
#include "gpu/gpu_entry.hpp"
#include "gpu/links.hpp"
#endif

namespace bwprof {

std::vector<PeerLink> peer_links() {
  load_builtins();
  std::vector<PeerLink> out;
#ifdef BWPROF_WITH_GPU
  const int n = gpu_device_count();
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      PeerLink p;
      p.a = a;
      p.b = b;
      p.link = peer_link(a, b, &p.direct);
      out.push_back(p);
    }
#endif
  return out;
}

std::string collective_library() {
#ifndef BWPROF_WITH_GPU
  BWPROF_INVALID("collectives run on GPUs: this build has no GPU support (built with BWPROF_GPU=OFF or no GPU compiler)");
#endif
  return collective_library_text();
}

void collective_search_dir(const std::string& dir) { add_collective_search_dir(dir); }

std::string collective_job_id() {
  load_builtins();
  return collective_unique_id();
}

void collective_join_job(const std::string& id, int world_size, int rank, const std::string& device) {
  load_builtins();
  Backend& b = backend_for(device);  // validates the device id
  if (b.info().kind != "gpu") BWPROF_INVALID("device: a collective job runs on a GPU, not on '" + device + "'");
  collective_join(id, world_size, rank, std::stoi(b.info().id.substr(4)));
}

void collective_leave_job() { collective_leave(); }

}  // namespace bwprof
