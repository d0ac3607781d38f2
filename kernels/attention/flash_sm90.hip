// Attention's prefill kernel on NVIDIA Hopper (sm_90a builds; FP16 or BF16; contiguous K/V): wgmma
// on tiles that the bulk tensor copy engine (TMA) brings into shared memory, as the GEMM's
// wgmma_sm90.hip does. A block takes 128 query rows of one head: warpgroup 0 is the producer (one
// thread asks the copy engine for Q once, then K and V tiles of 128 keys (64 at head dim 256) into
// a two-stage ring, 128-byte swizzled, each stage completing on its `full` mbarrier); warpgroups 1
// and 2 own 64 rows each: S = Q.K^T with both operands in shared memory (wgmma, K-major), the
// online softmax on S's registers (FP32), then O += P.V with P straight from those registers as
// the A operand (16-bit pairs) and V from shared memory; then the stage goes back through its
// `empty` mbarrier. Head dims 80 and 96 are read as 128 wide: the copy engine fills the columns
// past the head with zeros. Causal: the heaviest row tiles start first, tiles past a block's last
// visible key are not loaded. The grouped-query heads read their K/V tiles from L2 after the first.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#include "attention/gpu.hpp"
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_wgmma.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace attention {

namespace {

using namespace gpu;

// DP: the head dim as the tiles hold it (64, 128 or 256; 80 and 96 padded to 128).
template <int DP>
struct Sm90Cfg {
  static constexpr int kBr = 128;                  // 2 consumer warpgroups x 64 rows
  static constexpr int kBc = DP > 128 ? 64 : 128;  // keys per tile
  static constexpr int kQBytes = kBr * DP * 2;
  static constexpr int kKvBytes = kBc * DP * 2;    // K or V, one stage
  static constexpr int kStages = 2;
  static constexpr int kThreads = 384;
  static constexpr int kSmemBytes = kQBytes + 2 * kStages * kKvBytes + 1024 + 64;  // + alignment, barriers
};

#if defined(BWPROF_WGMMA_DEVICE)
__device__ __forceinline__ float sm90_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#endif

template <class T, int DP>
__global__ void __launch_bounds__(Sm90Cfg<DP>::kThreads, 1)
    bwprof_attention_flash_sm90(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                                const __grid_constant__ CUtensorMap tmV, T* __restrict__ O, int heads, int kv_heads,
                                int seq_q, int seq_kv, int D, int group, float scale_log2, bool causal) {
#if defined(BWPROF_WGMMA_DEVICE)
  using C = Sm90Cfg<DP>;
  constexpr int BC = C::kBc, BR = C::kBr;
  constexpr bool kBf16 = std::is_same<T, bf16>::value;
  extern __shared__ __align__(1024) unsigned char fa_smem[];
  const unsigned base = (smem_u32(fa_smem) + 1023u) & ~1023u;  // the 128-byte swizzle repeats every 1 KB
  const unsigned q_s = base, k_s = base + C::kQBytes, v_s = k_s + C::kStages * C::kKvBytes;
  const unsigned qbar = v_s + C::kStages * C::kKvBytes, full = qbar + 8, empty = full + 8 * C::kStages;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;  // the last row tile first: the heaviest if causal
  const int h = blockIdx.y, b = blockIdx.z, kvh = h / group;
  const int shift = seq_kv - seq_q;  // query i sees keys <= i + shift under the causal mask
  const int q_last = min(q0 + BR, seq_q) - 1;
  const int k_stop = causal ? min(seq_kv, q_last + shift + 1) : seq_kv;
  const int ntiles = (k_stop + BC - 1) / BC;
  if (threadIdx.x == 0) {
    mbar_init(qbar, 1);
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, 2);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    regs_shrink<40>();
    if (t == 0) {
      const int qrow = (b * heads + h) * seq_q + q0, kvrow = (b * kv_heads + kvh) * seq_kv;
      mbar_expect_tx(qbar, C::kQBytes);
#pragma unroll
      for (int j = 0; j < DP / 64; ++j) tma_load_2d(q_s + j * BR * 128, &tmQ, 64 * j, qrow, qbar);
      for (int kt = 0; kt < ntiles; ++kt) {
        const int s = kt % C::kStages;
        if (kt >= C::kStages) mbar_wait(empty + 8 * s, ((kt / C::kStages) - 1) & 1);
        mbar_expect_tx(full + 8 * s, 2 * C::kKvBytes);
#pragma unroll
        for (int j = 0; j < DP / 64; ++j) {  // 64-column boxes (128-byte rows)
          tma_load_2d(k_s + s * C::kKvBytes + j * BC * 128, &tmK, 64 * j, kvrow + kt * BC, full + 8 * s);
          tma_load_2d(v_s + s * C::kKvBytes + j * BC * 128, &tmV, 64 * j, kvrow + kt * BC, full + 8 * s);
        }
      }
    }
    return;
  }

  regs_grow<232>();
  const int c = wg - 1;  // this warpgroup's rows: q0 + 64 c ..
  const int w = t / 32, l = t % 32, tq = l % 4;
  const int r0 = q0 + c * 64 + 16 * w + l / 4;  // this thread's rows: r0 and r0 + 8
  float o[DP / 2];
#pragma unroll
  for (int i = 0; i < DP / 2; ++i) o[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, lsum[2] = {0.f, 0.f};
  mbar_wait(qbar, 0);
  for (int kt = 0; kt < ntiles; ++kt) {
    const int s = kt % C::kStages;
    mbar_wait(full + 8 * s, (kt / C::kStages) & 1);
    float sc[BC / 2];
#pragma unroll
    for (int i = 0; i < BC / 2; ++i) sc[i] = 0.f;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < DP / 16; ++kk) {  // 16 deep each: 32 bytes along the 128-byte rows of a box
      const unsigned qa = q_s + (kk / 4) * BR * 128 + c * 64 * 128 + (kk % 4) * 32;
      const unsigned kb = k_s + s * C::kKvBytes + (kk / 4) * BC * 128 + (kk % 4) * 32;
      wgmma_ss_kmajor<BC, kBf16>(sc, wgmma_desc(qa, 16, 1024), wgmma_desc(kb, 16, 1024), 1);
    }
    wgmma_commit();
    wgmma_wait<0>();
    // sc[4i + 2rr + e]: row r0 + 8 rr, key kt * BC + 8 i + 2 tq + e.
    const int kt0 = kt * BC;
    if (kt0 + BC > seq_kv || (causal && kt0 + BC - 1 > q0 + c * 64 + shift)) {
#pragma unroll
      for (int i = 0; i < BC / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int j = kt0 + 8 * i + 2 * tq + (e & 1);
          if (j >= seq_kv || (causal && j > r0 + 8 * (e >> 1) + shift)) sc[4 * i + e] = -INFINITY;
        }
    }
    float corr[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float mx = m[rr];
#pragma unroll
      for (int i = 0; i < BC / 8; ++i) mx = fmaxf(mx, fmaxf(sc[4 * i + 2 * rr], sc[4 * i + 2 * rr + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float use = mx == -INFINITY ? 0.f : mx * scale_log2;
      corr[rr] = m[rr] == -INFINITY ? 0.f : sm90_exp2(m[rr] * scale_log2 - use);
      m[rr] = mx;
      float sum = 0.f;
#pragma unroll
      for (int i = 0; i < BC / 8; ++i) {
        sc[4 * i + 2 * rr] = sm90_exp2(fmaf(sc[4 * i + 2 * rr], scale_log2, -use));
        sc[4 * i + 2 * rr + 1] = sm90_exp2(fmaf(sc[4 * i + 2 * rr + 1], scale_log2, -use));
        sum += sc[4 * i + 2 * rr] + sc[4 * i + 2 * rr + 1];
      }
      lsum[rr] = lsum[rr] * corr[rr] + sum;
    }
#pragma unroll
    for (int i = 0; i < DP / 8; ++i) o[4 * i] *= corr[0], o[4 * i + 1] *= corr[0], o[4 * i + 2] *= corr[1], o[4 * i + 3] *= corr[1];
    // P as the A operand: the accumulators of keys 16 kc .. 16 kc + 15, as 16-bit pairs.
    unsigned pa[BC / 16][4];
#pragma unroll
    for (int kc = 0; kc < BC / 16; ++kc) {
      pa[kc][0] = pack2<T>(sc[8 * kc + 0], sc[8 * kc + 1]);
      pa[kc][1] = pack2<T>(sc[8 * kc + 2], sc[8 * kc + 3]);
      pa[kc][2] = pack2<T>(sc[8 * kc + 4], sc[8 * kc + 5]);
      pa[kc][3] = pack2<T>(sc[8 * kc + 6], sc[8 * kc + 7]);
    }
    wgmma_fence();
#pragma unroll
    for (int kc = 0; kc < BC / 16; ++kc)  // 16 keys each: 16 rows of V's 128-byte boxes
      wgmma_rs<DP, kBf16>(o, pa[kc], wgmma_desc(v_s + s * C::kKvBytes + kc * 16 * 128, BC * 128, 1024));
    wgmma_commit();
    wgmma_wait<0>();
    if (t == 0) mbar_arrive(empty + 8 * s);
  }
  // O[4i + 2rr + e]: row r0 + 8 rr, column 8 i + 2 tq + e.
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    float lt = lsum[rr];
    lt += __shfl_xor_sync(0xffffffffu, lt, 1);
    lt += __shfl_xor_sync(0xffffffffu, lt, 2);
    const int row = r0 + 8 * rr;
    if (row >= seq_q) continue;
    const float inv = lt > 0.f ? 1.f / lt : 0.f;
    T* out = O + (static_cast<std::size_t>(b * heads + h) * seq_q + row) * D;
#pragma unroll
    for (int i = 0; i < DP / 8; ++i) {
      const int col = 8 * i + 2 * tq;
      if (col < D) *reinterpret_cast<unsigned*>(out + col) = pack2<T>(o[4 * i + 2 * rr] * inv, o[4 * i + 2 * rr + 1] * inv);
    }
  }
#endif
}

class FlashSm90Impl final : public FlashSm90 {
 public:
  FlashSm90Impl(const Launch& l) : bf16_(l.dtype == DType::kBF16), dp_(l.D <= 64 ? 64 : l.D <= 128 ? 128 : 256) {
    const int box_rows = 128, kv_rows = dp_ > 128 ? 64 : 128;
    tmQ_ = b16_tensor_map(l.Q, bf16_, l.B * l.H * l.Sq, l.D, l.D, 64, box_rows);
    tmK_ = b16_tensor_map(l.K, bf16_, l.B * l.Hkv * l.kv.seq_kv, l.D, l.D, 64, kv_rows);
    tmV_ = b16_tensor_map(l.V, bf16_, l.B * l.Hkv * l.kv.seq_kv, l.D, l.D, 64, kv_rows);
    res_ = dispatch(l, false);
  }
  Resources run(const Launch& l, bool launch) override { return launch ? dispatch(l, true) : res_; }

 private:
  Resources dispatch(const Launch& l, bool launch) {
    switch (dp_) {
      case 64: return bf16_ ? go<bf16, 64>(l, launch) : go<__half, 64>(l, launch);
      case 128: return bf16_ ? go<bf16, 128>(l, launch) : go<__half, 128>(l, launch);
      default: return bf16_ ? go<bf16, 256>(l, launch) : go<__half, 256>(l, launch);
    }
  }
  template <class T, int DP>
  Resources go(const Launch& l, bool launch) {
    using C = Sm90Cfg<DP>;
    auto* fn = &bwprof_attention_flash_sm90<T, DP>;
    if (!launch) {
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                           hipFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
      return kernel_resources(fn, C::kThreads, C::kSmemBytes);
    }
    const dim3 grid(static_cast<unsigned>((l.Sq + C::kBr - 1) / C::kBr), static_cast<unsigned>(l.H),
                    static_cast<unsigned>(l.B));
    fn<<<grid, C::kThreads, C::kSmemBytes, l.stream>>>(tmQ_, tmK_, tmV_, static_cast<T*>(l.O), int(l.H), int(l.Hkv),
                                                       int(l.Sq), l.kv.seq_kv, l.D, l.group, l.scale_log2, l.causal);
    BWPROF_CHECK_LAUNCH("bwprof_attention_flash_sm90");
    return {};
  }
  bool bf16_;
  int dp_;
  CUtensorMap tmQ_{}, tmK_{}, tmV_{};
  Resources res_;
};

}  // namespace

std::unique_ptr<FlashSm90> make_flash_sm90(GpuBackend& g, const Launch& l) {
#if defined(BWPROF_HAVE_SM90A)
  // Contiguous K/V, 16-bit, an sm_90 device; the grid's y and z carry heads and batch.
  const std::int64_t lim = 2147483647;  // the copy engine's row coordinates are 32-bit
  if (g.info().arch != "sm_90" || l.paged || l.dtype == DType::kF32 || l.H > 65535 || l.B > 65535 ||
      l.B * l.H * l.Sq > lim || l.B * l.Hkv * l.kv.seq_kv > lim)
    return nullptr;
  return std::make_unique<FlashSm90Impl>(l);
#else
  (void)g, (void)l;
  return nullptr;
#endif
}

}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
