// Collectives' sizes, inputs and float64 reference, as nccl-tests defines them.
#include "collective/collective.hpp"

#include "bwprof/error.hpp"
#include "collective/nccl_api.hpp"

namespace bwprof {

Collective parse_collective(const std::string& k) {
  if (k == "all_reduce") return Collective::kAllReduce;
  if (k == "all_gather") return Collective::kAllGather;
  if (k == "reduce_scatter") return Collective::kReduceScatter;
  if (k == "all_to_all") return Collective::kAllToAll;
  if (k == "broadcast") return Collective::kBroadcast;
  BWPROF_INVALID("kernel: '" + k + "' is not a collective");
}

double busbw_factor(Collective c, std::int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (c) {
    case Collective::kAllReduce: return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast: return 1.0;
  }
  return 1.0;
}

std::int64_t collective_bytes(Collective c, std::int64_t bytes, std::int64_t ranks, DType t) {
  const std::int64_t e = static_cast<std::int64_t>(dtype_size(t));
  // all-gather, reduce-scatter and all-to-all cut the buffer into one part per rank.
  const std::int64_t unit = c == Collective::kAllReduce || c == Collective::kBroadcast ? e : e * ranks;
  return bytes / unit * unit;
}

CollectiveCounts collective_counts(Collective c, std::int64_t bytes, std::int64_t ranks, DType t) {
  const std::int64_t total = collective_bytes(c, bytes, ranks, t) / static_cast<std::int64_t>(dtype_size(t));
  CollectiveCounts n;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kAllToAll:
      n.in = n.out = n.call = total;
      if (c == Collective::kAllToAll) n.call = total / ranks;
      break;
    case Collective::kAllGather:
      n.in = n.call = total / ranks;
      n.out = total;
      break;
    case Collective::kReduceScatter:
      n.in = total;
      n.out = n.call = total / ranks;
      break;
  }
  return n;
}

float collective_input(std::int64_t rank, std::int64_t i) {
  std::uint64_t z = static_cast<std::uint64_t>(rank + 1) * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(i) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
  z ^= z >> 29;
  const int k = static_cast<int>(z % 33) - 16;  // -16..16
  return static_cast<float>(k == 0 ? 1 : k) / 8.0f;
}

double collective_gold(Collective c, std::int64_t ranks, std::int64_t rank, std::int64_t i, const CollectiveCounts& n) {
  switch (c) {
    case Collective::kAllReduce: {
      double s = 0;
      for (std::int64_t k = 0; k < ranks; ++k) s += collective_input(k, i);
      return s;
    }
    case Collective::kAllGather:
      return collective_input(i / n.in, i % n.in);
    case Collective::kReduceScatter: {
      double s = 0;
      for (std::int64_t k = 0; k < ranks; ++k) s += collective_input(k, rank * n.out + i);
      return s;
    }
    case Collective::kAllToAll: {
      const std::int64_t chunk = n.in / ranks;  // rank k's chunk `rank` lands in our chunk k
      return collective_input(i / chunk, rank * chunk + i % chunk);
    }
    case Collective::kBroadcast:
      return collective_input(0, i);
  }
  return 0;
}

std::string collective_library_text() {
  const nccl::Library& l = nccl::library();
  return l.version_text() + " (" + l.path + ")";
}

void add_collective_search_dir(const std::string& dir) { nccl::add_search_dir(dir); }

#ifndef BWPROF_WITH_GPU
// A build without the GPU backend: the job calls say why they cannot run.
std::string collective_unique_id() {
  BWPROF_INVALID("collectives run on GPUs: this build has no GPU support (built with BWPROF_GPU=OFF or no GPU compiler)");
}
void collective_join(const std::string&, int, int, int) { collective_unique_id(); }
void collective_leave() {}
int collective_job_ranks() { return 0; }
#endif

}  // namespace bwprof
