// Collectives: all-reduce, all-gather, reduce-scatter, all-to-all (grouped send/recv, as
// nccl-tests does) and broadcast, FP32/FP16/BF16, 1 KB to 1 GB, through NCCL or RCCL found at run
// time. A row's bandwidth_gbs is nccl-tests' bus bandwidth (the bytes written are the bus bytes);
// bwprof.collectives() adds the algorithm bandwidth beside it. Run only when asked for by name.
#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "collective/collective.hpp"
#ifdef BWPROF_WITH_GPU
#include "gpu/gpu_entry.hpp"
#endif

namespace bwprof {

namespace {

// `ranks` = 0: every GPU this process sees, or the joined job's ranks.
void resolve_ranks(Problem& p) {
  std::int64_t ranks = p.i("ranks");
  const int job = collective_job_ranks();
  if (job > 0) {
    if (ranks != 0 && ranks != job)
      BWPROF_INVALID("ranks: this process is rank of a job of " + std::to_string(job) + " ranks; ranks=" +
                     std::to_string(ranks) + " cannot run in it (leave ranks=0)");
    ranks = job;
  } else if (ranks == 0) {
#ifdef BWPROF_WITH_GPU
    ranks = gpu_device_count();
#endif
    if (ranks == 0) ranks = 1;
  }
  p.set("ranks", ParamValue(ranks));
  const Collective c = parse_collective(p.kernel);
  const std::int64_t bytes = collective_bytes(c, p.i("bytes"), ranks, p.dtype);
  if (bytes <= 0)
    BWPROF_INVALID("bytes: " + std::to_string(p.i("bytes")) + " is too small for " + p.kernel + " over " +
                   std::to_string(ranks) + " ranks in " + to_string(p.dtype) + " (at least one element per rank)");
  p.set("bytes", ParamValue(bytes));  // rounded down to whole elements per rank, as nccl-tests does
}

}  // namespace

void register_family_collective(Registry& r) {
  struct Spec {
    const char* name;
    const char* doc;
  };
  const Spec specs[] = {
      {"all_reduce", "sum of every rank's buffer into every rank's (ncclAllReduce); bytes: the buffer"},
      {"all_gather", "every rank's part gathered into every rank (ncclAllGather); bytes: the gathered buffer"},
      {"reduce_scatter", "sum of every rank's buffer, one part to each rank (ncclReduceScatter); bytes: the input"},
      {"all_to_all", "each rank sends part k of its buffer to rank k (grouped ncclSend/ncclRecv); bytes: the buffer"},
      {"broadcast", "rank 0's buffer into every rank's (ncclBroadcast); bytes: the buffer"},
  };
  const int order = 87;  // after the peer copies, before the intensity sweep (90)
  for (const Spec& s : specs) {
    KernelFamily k;
    k.name = s.name;
    k.family = "collective";
    k.doc = std::string(s.doc) + "; over the GPUs of this process, or every rank of a torchrun/mpirun/srun job";
    k.order = order;
    k.params = {int_param("bytes", "67108864", 1, kMaxElements, "nccl-tests' size in bytes"),
                int_param("ranks", "0", 0, 1 << 20, "GPUs to span (0: every GPU of this process, or the job's ranks)")};
    // Per GPU: its input and output; on the host: one rank's input as it is made, and an output to check.
    k.footprint = [](const Problem& p, const std::string& kind) {
      const CollectiveCounts n = collective_counts(parse_collective(p.kernel), p.i("bytes"), p.i("ranks"), p.dtype);
      const double e = elem_bytes(p), bytes = (n.in + n.out) * e;
      return Footprint{bytes, kind == "cpu" ? 0.0 : bytes};
    };
    k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
    k.resolve = resolve_ranks;
    // nccl-tests' bus bytes, so that bandwidth_gbs is its bus bandwidth (judged against the link).
    k.traffic = [](const Problem& p) {
      const Collective c = parse_collective(p.kernel);
      return Traffic{0, static_cast<double>(p.i("bytes")) * busbw_factor(c, p.i("ranks")), 0};
    };
#ifdef BWPROF_WITH_GPU
#ifdef BWPROF_GPU_HIP
    k.variants.push_back(Variant{"rccl", "gpu", make_collective_gpu});
#else
    k.variants.push_back(Variant{"nccl", "gpu", make_collective_gpu});
#endif
#endif
    for (std::int64_t b : {1ll << 10, 32ll << 10, 1ll << 20, 32ll << 20, 256ll << 20, 1ll << 30})
      k.suite.push_back(SuiteConfig{"bytes={bytes:bin}", {{"bytes", b}}, {{"bytes", b > (32ll << 20) ? (32ll << 20) : b}},
                                    {}, {DType::kF32, DType::kF16, DType::kBF16}});
    k.default_suite = false;
    r.add_family(std::move(k));
  }
}

}  // namespace bwprof
