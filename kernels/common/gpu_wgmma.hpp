// NVIDIA Hopper (sm_90a) helpers for the `tensor` GEMM and attention (whose own wgmma forms are in
// gpu_wgmma_attn.hpp): mbarriers, the bulk tensor copy engine (TMA) and warpgroup MMA (wgmma).
// The bodies exist only in the sm_90a pass of nvcc (__CUDA_ARCH_FEAT_SM90_ALL); elsewhere they are
// empty and the host never launches a kernel that uses them (see wgmma_fits() in
// kernels/gemm/wgmma_sm90.hip). CUDA only: AMD's matrix path is MFMA (kernels/gemm/mfma_cdna.hip).
#pragma once
#include "common/gpu_runtime.hpp"

#if defined(BWPROF_CUDA)
#include <cstdint>

#include <cuda.h>  // CUtensorMap (a plain struct; the driver call that fills it is looked up at run time)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BWPROF_WGMMA_DEVICE 1
#endif

namespace bwprof {
namespace gpu {

// A row-major 16-bit matrix [rows, cols] (leading dimension ld, in elements; FP16 or BF16) as a
// tensor map whose box is box_cols x box_rows, 128-byte swizzled; reads outside the matrix return
// zeros (host side: kernels/common/tensor_map_sm90.hip).
CUtensorMap b16_tensor_map(const void* base, bool bf16, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                           int box_cols, int box_rows);
// Heads of a row-major 16-bit matrix each, [heads, rows, cols] contiguous, as a 3-D tensor map whose
// box is box_cols x box_rows of one head, 128-byte swizzled: a box is clipped at its own head's last
// row and column (the copy engine's stores past them write nothing).
CUtensorMap b16_tensor_map_heads(void* base, bool bf16, std::int64_t heads, std::int64_t rows, std::int64_t cols,
                                 int box_cols, int box_rows);

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarriers ------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
#endif
}
// Makes the initialised barriers visible to the copy engine (the async proxy).
__device__ __forceinline__ void mbar_init_fence() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#endif
}
// Spins until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}

// ---- thread block clusters (blocks of a cluster share each other's shared memory) -------------
// This block's rank in its cluster (0 without clusters).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r = 0;
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}
// Every thread of every block of the cluster meets here (a block's shared memory, barriers
// included, is ready for the others once they pass). Every thread of the block calls it.
__device__ __forceinline__ void cluster_sync() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}
// An arrival on the barrier at the same shared-memory offset (`bar`, this block's address) in the
// cluster's block `rank` (this block's own when rank is its own). The plain arrive: one with
// .release.cluster semantics made a wgmma GEMM whose stages it freed 1.3-2.6x slower on an H100.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
#endif
}

// Makes this thread's earlier writes to shared memory (plain stores, cp.async) visible to the
// async proxy (wgmma's operand reads, the copy engine).
__device__ __forceinline__ void fence_async_shared() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// An arrival on the barrier once every cp.async this thread issued before has landed (counted in
// the barrier's arrival count).
__device__ __forceinline__ void mbar_arrive_cp_async(unsigned bar) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
#endif
}
// 16 bytes global -> shared (a shared-space address), bypassing L1; `bytes` 0 writes zeros.
__device__ __forceinline__ void cp_async16_to(unsigned dst, const void* src, int bytes) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
#endif
}
// The same, always 16 bytes (no zero-fill operand: fewer instructions where no copy can fall short).
__device__ __forceinline__ void cp_async16_to(unsigned dst, const void* src) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#endif
}

// ---- TMA: a 2-D box from global memory into shared memory, completing on an mbarrier ---------
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, int c0, int c1, unsigned bar) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
#endif
}

// The same box into the shared memory of every block of the cluster in `mask` (bit r: rank r), at
// the same offset `dst` in each, completing on the barrier at offset `bar` in each.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const CUtensorMap* map, int c0, int c1, unsigned bar,
                                                      unsigned short mask) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
#endif
}

// ---- TMA: a box from shared memory to global memory (bulk groups) ----------------------------
// A 3-D box (columns c0.., rows c1.., head c2) of a b16_tensor_map_heads map from shared memory
// `src` (written by this block's threads: fence_async_shared() and a barrier before); the copy
// joins this thread's open bulk group.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, unsigned src, int c0, int c1, int c2) {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<unsigned long long>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#endif
}
// Closes this thread's open bulk group.
__device__ __forceinline__ void bulk_commit() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
// Waits until this thread's bulk groups have read their shared memory (it may be written again).
__device__ __forceinline__ void bulk_wait_read() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#endif
}
// Waits until this thread's bulk groups are complete (their writes to global memory done).
__device__ __forceinline__ void bulk_wait() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

// ---- wgmma ------------------------------------------------------------------------------------
// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride byte
// offsets (all in 16-byte units), swizzle mode 1 in bits 62-63.
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<unsigned long long>((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
// A descriptor built once for a buffer's base and moved by byte offsets within it: the offset in
// 16-byte units added to the low word, which cannot carry out of its 14-bit address field (shared
// addresses stay below 2^18). With a constant offset that is one add a descriptor, where
// wgmma_desc(base + offset) rebuilt it (mask, shift, or, moves to uniform registers: about 12 of the
// attention kernel's instructions for each of its 20 wgmma a step at head dim 256).
struct WgmmaDescBase {
  unsigned lo, hi;
};
__device__ __forceinline__ WgmmaDescBase wgmma_desc_base(unsigned addr, unsigned lbo, unsigned sbo) {
  const unsigned long long d = wgmma_desc(addr, lbo, sbo);
  return {static_cast<unsigned>(d), static_cast<unsigned>(d >> 32)};
}
__device__ __forceinline__ unsigned long long wgmma_desc_at(WgmmaDescBase b, unsigned offset) {
  return (static_cast<unsigned long long>(b.hi) << 32) | (b.lo + (offset >> 4));
}
// A buffer's descriptors at byte offsets: moved from its base descriptor (AT), or each built anew.
template <bool AT>
struct WgmmaDescs {
  unsigned addr, lbo, sbo;
  WgmmaDescBase base;
  __device__ __forceinline__ WgmmaDescs(unsigned a, unsigned l, unsigned s)
      : addr(a), lbo(l), sbo(s), base(AT ? wgmma_desc_base(a, l, s) : WgmmaDescBase{0, 0}) {}
  __device__ __forceinline__ unsigned long long at(unsigned offset) const {
    if constexpr (AT) return wgmma_desc_at(base, offset);
    return wgmma_desc(addr + offset, lbo, sbo);
  }
};
__device__ __forceinline__ void wgmma_fence() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Register budget per warpgroup role (needs the kernel's register cap from __launch_bounds__(n, 1)).
template <int R>
__device__ __forceinline__ void regs_grow() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
template <int R>
__device__ __forceinline__ void regs_shrink() {
#if defined(BWPROF_WGMMA_DEVICE)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}

// D[64 x 64] (+)= A[64 x 16] (smem, K-major) . B[16 x 64] (smem, N-major), FP32 accumulators:
// 32 per thread. `accumulate` 0 overwrites D.
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n64k16(float* d, unsigned long long da, unsigned long long db, int accumulate) {
#if defined(BWPROF_WGMMA_DEVICE)
  if constexpr (BF16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(accumulate));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(accumulate));
  }
#endif
}

// D[64 x 128] (+)= A[64 x 16] (smem, K-major) . B[16 x 128] (smem, N-major), FP32 accumulators:
// 64 per thread. `accumulate` 0 overwrites D.
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n128k16(float* d, unsigned long long da, unsigned long long db, int accumulate) {
#if defined(BWPROF_WGMMA_DEVICE)
  if constexpr (BF16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(accumulate));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(accumulate));
  }
#endif
}

// D[64 x 256] (+)= A[64 x 16] (smem, K-major) . B[16 x 256] (smem, N-major), FP32 accumulators:
// 128 per thread. `accumulate` 0 overwrites D.
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n256k16(float* d, unsigned long long da, unsigned long long db, int accumulate) {
#if defined(BWPROF_WGMMA_DEVICE)
  if constexpr (BF16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(accumulate));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(accumulate));
  }
#endif
}

// BF16 picks the bfloat16 form of the instruction (same layouts, same accumulators).
template <int N, bool BF16 = false>
__device__ __forceinline__ void wgmma_m64k16(float* d, unsigned long long da, unsigned long long db, int accumulate) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma N: 64, 128 or 256");
  if constexpr (N == 64) wgmma_m64n64k16<BF16>(d, da, db, accumulate);
  if constexpr (N == 128) wgmma_m64n128k16<BF16>(d, da, db, accumulate);
  if constexpr (N == 256) wgmma_m64n256k16<BF16>(d, da, db, accumulate);
}

}  // namespace gpu
}  // namespace bwprof
#endif  // BWPROF_CUDA
