// Collectives over the GPUs of a node (one process driving them all, as nccl-tests' single-process
// mode) or over every rank of a job (one process per GPU, started by torchrun/mpirun/srun), through
// NCCL/RCCL. Sizes, bus bandwidth and the reference follow nccl-tests (its doc/PERFORMANCE.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "bwprof/kernel.hpp"

namespace bwprof {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };

// "all_reduce" -> kAllReduce, ...; InvalidArgument for another name.
Collective parse_collective(const std::string& kernel);
// nccl-tests' bus bandwidth factor for `ranks` ranks: busbw = algbw x factor, which makes a
// collective's figure comparable with the hardware's link bandwidth whatever the rank count:
// 2(n-1)/n all-reduce; (n-1)/n all-gather, reduce-scatter and all-to-all; 1 broadcast.
double busbw_factor(Collective c, std::int64_t ranks);

// What one rank holds: elements in its input and output buffers for nccl-tests' `size` in bytes
// (all-reduce, broadcast, all-to-all: the buffer; all-gather: the gathered output; reduce-scatter:
// the input that is scattered).
struct CollectiveCounts {
  std::int64_t in = 0, out = 0;
  std::int64_t call = 0;  // the count the library call takes (per rank for all-gather / reduce-scatter)
};
CollectiveCounts collective_counts(Collective c, std::int64_t bytes, std::int64_t ranks, DType t);
// The largest size of at most `bytes` that splits evenly over `ranks` ranks (what the row records).
std::int64_t collective_bytes(Collective c, std::int64_t bytes, std::int64_t ranks, DType t);

// Input element i of rank r: multiples of 1/8 in [-2, 2], never all zero, exact in FP16 and BF16,
// so that sums over a few ranks stay exact whatever order the library adds in.
float collective_input(std::int64_t rank, std::int64_t i);
// The float64 reference of output element i of rank r.
double collective_gold(Collective c, std::int64_t ranks, std::int64_t rank, std::int64_t i, const CollectiveCounts& n);

// The library's name and version once loaded ("NCCL 2.23.5 (/path/libnccl.so.2)"); InvalidArgument
// naming the library when it cannot be loaded.
std::string collective_library_text();
// Extra folders to find the library in (nccl_api.hpp).
void add_collective_search_dir(const std::string& dir);

// Across processes: rank 0 makes the id (128 bytes), every rank joins with it on `device` (its
// ordinal). Until collective_leave(), collectives measured in this process run over that job's
// communicator (one rank here) instead of over the GPUs this process sees.
std::string collective_unique_id();
void collective_join(const std::string& id, int nranks, int rank, int device);
void collective_leave();
// Ranks of the joined job (0 when none).
int collective_job_ranks();

std::unique_ptr<KernelInstance> make_collective_gpu(Backend&, const Problem&);

}  // namespace bwprof
