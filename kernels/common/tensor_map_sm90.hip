// The bulk tensor copy engine's descriptors (CUDA, Hopper): a row-major 16-bit matrix as a tensor
// map, for the wgmma kernels of the GEMM (kernels/gemm/wgmma_sm90.hip) and attention
// (kernels/attention/flash_sm90.hip).
#include "common/gpu_wgmma.hpp"
#if defined(BWPROF_CUDA)
#include <cstdint>
#include <string>

#include "bwprof/error.hpp"

namespace bwprof {
namespace gpu {

namespace {
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
}  // namespace

namespace {
EncodeTiledFn encode_fn() {
  static EncodeTiledFn encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    BWPROF_GPU_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn)
      throw Error("cuTensorMapEncodeTiled: not found in the installed driver");
    return reinterpret_cast<EncodeTiledFn>(fn);
  }();
  return encode;
}
// A 16-bit tensor of `rank` dimensions (dims innermost first; strides in bytes of dims 1..), 128-byte swizzled.
CUtensorMap b16_map(void* base, bool bf16, cuuint32_t rank, const cuuint64_t* dims, const cuuint64_t* strides,
                    const cuuint32_t* box) {
  CUtensorMap m{};
  const cuuint32_t step[3] = {1, 1, 1};
  const CUresult r = encode_fn()(&m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank,
                                 base, dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw Error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")");
  return m;
}
}  // namespace

CUtensorMap b16_tensor_map(const void* base, bool bf16, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                           int box_cols, int box_rows) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  return b16_map(const_cast<void*>(base), bf16, 2, dims, strides, box);
}

CUtensorMap b16_tensor_map_heads(void* base, bool bf16, std::int64_t heads, std::int64_t rows, std::int64_t cols,
                                 int box_cols, int box_rows) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(heads)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols) * 2, static_cast<cuuint64_t>(rows * cols) * 2};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows), 1};
  return b16_map(base, bf16, 3, dims, strides, box);
}

}  // namespace gpu
}  // namespace bwprof
#endif  // BWPROF_CUDA
