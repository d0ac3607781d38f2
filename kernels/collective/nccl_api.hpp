// The collective library (NCCL on NVIDIA, RCCL on AMD, which keeps NCCL's API), opened at run time
// with dlopen: the few declarations bwprof calls, written here after the library's public API, so
// that no nccl.h / rccl.h is needed to build (CI and the AMD build compile without it). Streams are
// passed as void* (cudaStream_t and hipStream_t are both pointers).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace bwprof {
namespace nccl {

struct CommSt;
using Comm = CommSt*;  // ncclComm_t
using Result = int;    // ncclResult_t: ncclSuccess = 0
constexpr Result kSuccess = 0;
constexpr Result kInProgress = 7;
struct UniqueId {      // ncclUniqueId
  char internal[128];
};
// ncclDataType_t and ncclRedOp_t values (the same in RCCL).
enum DataType : int { kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9 };
enum RedOp : int { kSum = 0, kMax = 2 };

struct Library {
  std::string path;     // the file opened
  std::string name;     // "NCCL" or "RCCL"
  int version = 0;      // ncclGetVersion: 22305 for 2.23.5
  Result (*get_version)(int*) = nullptr;
  Result (*get_unique_id)(UniqueId*) = nullptr;
  Result (*comm_init_rank)(Comm*, int, UniqueId, int) = nullptr;
  Result (*comm_init_all)(Comm*, int, const int*) = nullptr;
  Result (*comm_destroy)(Comm) = nullptr;
  Result (*comm_count)(Comm, int*) = nullptr;
  Result (*comm_get_async_error)(Comm, Result*) = nullptr;
  const char* (*get_error_string)(Result) = nullptr;
  Result (*all_reduce)(const void*, void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*all_gather)(const void*, void*, std::size_t, int, Comm, void*) = nullptr;
  Result (*reduce_scatter)(const void*, void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*broadcast)(const void*, void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*send)(const void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*recv)(void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  std::string version_text() const;  // "NCCL 2.23.5"
};

// The library's file name for this build: libnccl.so.2 (CUDA) or librccl.so.1 (HIP).
const char* library_soname();
// Extra folders to look in (the Python package adds those of the nvidia-nccl wheel PyTorch ships).
void add_search_dir(const std::string& dir);
// The library, opened once: BWPROF_NCCL_LIBRARY (a file) if set, else the soname through the
// loader's path, else each search folder (BWPROF_NCCL_PATH, then add_search_dir()). InvalidArgument
// naming the library and every place tried when none loads.
const Library& library();
// Throws Error naming `call`, the library's message and version when `r` is not success.
void check(Result r, const char* call, const char* file, int line);

}  // namespace nccl
}  // namespace bwprof

#define BWPROF_NCCL_CHECK(expr) ::bwprof::nccl::check((expr), #expr, __FILE__, __LINE__)
