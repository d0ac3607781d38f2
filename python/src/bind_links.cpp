// bwprof._core: the links between GPUs, and the collective library (NCCL/RCCL) with its jobs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "bwprof/api.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace bwprof_python {

void bind_links(py::module_& m) {
  m.def("peer_links", [] {
    py::list out;
    for (auto& p : peer_links()) {
      py::dict d;
      d["src"] = "gpu:" + std::to_string(p.a);
      d["dst"] = "gpu:" + std::to_string(p.b);
      d["link"] = p.link.name;
      d["link_kind"] = p.link.kind;
      d["link_gbs"] = p.link.gbs;
      d["direct"] = p.direct;
      out.append(d);
    }
    return out;
  }, "The link between every ordered pair of GPUs (src -> dst), and whether they reach each other directly.");
  m.def("collective_library", &collective_library,
        "The collective library (NCCL/RCCL) as loaded: name, version, path; ValueError naming it when absent.");
  m.def("collective_search_dir", &collective_search_dir, py::arg("dir"),
        "A folder to look for the collective library in.");
  m.def("collective_job_id", [] { return py::bytes(collective_job_id()); },
        "A new job id (rank 0 makes it and shares it with the other ranks).");
  m.def("collective_join_job", [](const py::bytes& id, int world_size, int rank, const std::string& device) {
    const std::string s = id;
    py::gil_scoped_release nogil;  // ncclCommInitRank waits for every rank
    collective_join_job(s, world_size, rank, device);
  }, py::arg("job_id"), py::arg("world_size"), py::arg("rank"), py::arg("device"),
     "Join a job's communicator as `rank` of `world_size` on `device`.");
  m.def("collective_leave_job", &collective_leave_job, "Leave the job's communicator.");
}

}  // namespace bwprof_python
