// NVIDIA matrix-unit helpers shared by the GEMM and attention kernels (sm_80+: cp.async, ldmatrix,
// mma.sync m16n8k16). Under other compilers or older targets the bodies are empty and the host
// never launches a kernel that uses them.
#pragma once
#include "common/gpu_runtime.hpp"

#if defined(BWPROF_CUDA)
namespace bwprof {
namespace gpu {

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared, asynchronously; `full` false writes zeros (edges of the matrix).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool full) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(full ? 16 : 0));
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}
__device__ __forceinline__ void ldmatrix_x4(unsigned* r, const void* p) {
#if __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
#endif
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned* r, const void* p) {
#if __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
#endif
}
// D = A(16x16, row) . B(16x8, col) + D, FP16 operands, FP32 accumulators.
__device__ __forceinline__ void mma_16816(float* d, const unsigned* a, const unsigned* b) {
#if __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
// The same with BF16 operands (sm_80+).
__device__ __forceinline__ void mma_16816_bf16(float* d, const unsigned* a, const unsigned* b) {
#if __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
// p[0..3] += v0..v3 in L2, p on 16 bytes: one vector reduction on sm_90+ (a quarter of the requests
// that four scalar atomics make), four atomics before it.
__device__ __forceinline__ void red_add4(float* p, float v0, float v1, float v2, float v3) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1,%2,%3,%4};\n" ::"l"(p), "f"(v0), "f"(v1), "f"(v2), "f"(v3)
               : "memory");
#else
  atomicAdd(p, v0), atomicAdd(p + 1, v1), atomicAdd(p + 2, v2), atomicAdd(p + 3, v3);
#endif
}
// m16n8k16 for the 16-bit element type T (__half or bf16), so one kernel template serves both.
template <class T> __device__ __forceinline__ void mma_16816_t(float* d, const unsigned* a, const unsigned* b);
template <> __device__ __forceinline__ void mma_16816_t<__half>(float* d, const unsigned* a, const unsigned* b) {
  mma_16816(d, a, b);
}
template <> __device__ __forceinline__ void mma_16816_t<gpu_bf16>(float* d, const unsigned* a, const unsigned* b) {
  mma_16816_bf16(d, a, b);
}

}  // namespace gpu
}  // namespace bwprof
#endif
