// The GEMM engines behind one interface (GPU compilers only). One file per engine: tiled.hip (the
// vector units, every GPU), skinny_mma.hip (1-64 rows of A: split K on NVIDIA matrix units, B streamed),
// mma_sm80.hip (NVIDIA mma.sync), wgmma_sm90.hip (NVIDIA Hopper), mfma_cdna.hip (AMD CDNA),
// wmma_rdna3.hip (AMD RDNA3) and the vendor library (vendor_cublaslt.hip, vendor_rocblas.hip);
// pad.hip runs wgmma on padded copies of operands it cannot address; dispatch.hip chooses among
// them (GemmRunner::make / best, by the rules in choice.hpp); split_k.hip holds what the engines
// that split K share. The QKV projection (qkv.hip) runs its GEMMs through the same interface.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "bwprof/error.hpp"
#include "bwprof/kernel.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_runtime.hpp"
#include "common/reference.hpp"
#include "gemm/choice.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

// One GEMM C[M,N] = act(A[M,K] . B[K,N] + bias[N]) (row-major, leading dimensions lda/ldb/ldc) on
// a chosen engine, buffers fixed at construction.
// The `tensor` variant's kernel, tile and K split as the gemm family's parameters ask for them
// (engine, tile, splits: family.cpp); "auto" and 0 leave each to the rules (choice.hpp).
struct GemmChoice {
  std::string engine = "auto";  // auto, skinny, mma, wgmma
  std::string tile = "auto";    // rows x columns of a block's tile: "64x64", ...
  std::int64_t splits = 0;      // blocks that split K for each output tile
};

class GemmRunner {
 public:
  enum class Engine { kTiled, kTensor, kVendor };
  struct Shape {
    std::int64_t M, N, K, lda, ldb, ldc;
  };
  virtual ~GemmRunner() = default;
  virtual void run(hipStream_t stream) = 0;
  virtual Resources resources() const = 0;
  // What it runs (kernel, tile, split), as KernelInstance::explain() reports it.
  virtual std::string explain() const { return ""; }
  // InvalidArgument (naming what is available) where the engine cannot run on this device/dtype, or
  // `choice` asks for what cannot run here.
  static std::unique_ptr<GemmRunner> make(GpuBackend& g, DType dtype, Engine e, Shape s, const void* A,
                                          const void* B, void* C, const void* bias, Act act,
                                          const GemmChoice& choice = {});
  // The best engine this build and device have for `dtype`: vendor, else tensor (FP16/BF16), else tiled.
  static Engine best(GpuBackend& g, DType dtype);
};

namespace gemm {

inline int act_index(Act a) {
  switch (a) {
    case Act::kRelu: return gpu::kActRelu;
    case Act::kGelu: return gpu::kActGelu;
    case Act::kSilu: return gpu::kActSilu;
    default: return gpu::kActNone;
  }
}

// Calls f(std::integral_constant<int, A>) for the activation's compile-time index.
template <class F>
auto with_act(Act a, F&& f) {
  switch (act_index(a)) {
    case gpu::kActRelu: return f(std::integral_constant<int, gpu::kActRelu>());
    case gpu::kActGelu: return f(std::integral_constant<int, gpu::kActGelu>());
    case gpu::kActSilu: return f(std::integral_constant<int, gpu::kActSilu>());
    default: return f(std::integral_constant<int, gpu::kActNone>());
  }
}

inline void check_int_sizes(const GemmRunner::Shape& s) {
  const std::int64_t lim = 2147483647;
  if (s.M > lim || s.N > lim || s.K > lim || s.lda > lim || s.ldb > lim || s.ldc > lim)
    BWPROF_INVALID("M/N/K: at most 2^31-1 on the GPU");
}

// Split K (split_k.hip): the FP32 accumulator [M, N] (zeroed; rows split_acc_ld(N) floats apart,
// choice.hpp) that the splits of a tile add into (atomics); the last split of each tile turns it
// into C (bias, activation) and zeroes it again.
DeviceBuffer split_accumulator(std::int64_t M, std::int64_t N);

// The engines' factories, each defined by its file where that file's guard holds (dispatch.hip
// calls them under the same guard).
using Shape = GemmRunner::Shape;
// tiled.hip: every GPU, FP32, FP16 or BF16.
std::unique_ptr<GemmRunner> make_tiled(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B, void* C,
                                       const void* bias, Act act);
// The matrix-unit engines take FP16 or BF16 (`dtype`); `splits` (0: their rule) and `tile` (null
// or -1: their rule) as GemmChoice asks.
// skinny_mma.hip (NVIDIA, sm_80+): M <= kSmallMaxRows, any alignment (the dispatch takes it up to
// kSmallRows where rows are off 16 bytes: small_m_mma).
std::unique_ptr<GemmRunner> make_skinny_mma(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                            void* C, const void* bias, Act act, std::int64_t splits = 0);
// Whether a buffer starts on 16 bytes (the size of cp.async's and the copy engine's pieces).
inline bool on16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
inline bool on128(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 128 == 0; }
// mma_sm80.hip (NVIDIA, sm_80+): rows off 16 bytes are realigned in shared memory where A and B
// start on 16 bytes (on16), else loaded through registers.
std::unique_ptr<GemmRunner> make_mma_sm80(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B, void* C,
                                          const void* bias, Act act, const MmaTileShape* tile = nullptr,
                                          std::int64_t splits = 0);
// wgmma_sm90.hip (NVIDIA Hopper, sm_90a builds), where wgmma_fits(): wgmma_available() on this
// device and build, and A and B tma_addressable() (16-byte aligned start and rows).
bool wgmma_available(GpuBackend& g);
bool tma_addressable(const void* p, std::int64_t ld);
bool wgmma_fits(GpuBackend& g, const Shape& s, const void* A, const void* B, const void* C);
std::unique_ptr<GemmRunner> make_wgmma_sm90(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                            void* C, const void* bias, Act act, int tile = -1, std::int64_t splits = 0);
// pad.hip: A and/or B (whichever is not tma_addressable, or with align = 64 whose rows are not a
// multiple of 64 elements) copied into scratch whose rows are padded to `align` (8 or 64)
// elements each run, then wgmma on the copies; where wgmma_available().
std::unique_ptr<GemmRunner> make_padded_wgmma(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                              void* C, const void* bias, Act act, int align = 8, int tile = -1,
                                              std::int64_t splits = 0);
// mfma_cdna.hip (AMD CDNA), where has_mfma().
bool has_mfma(const std::string& arch);
std::unique_ptr<GemmRunner> make_mfma_cdna(DType dtype, Shape s, const void* A, const void* B, void* C,
                                           const void* bias, Act act);
// wmma_rdna3.hip (AMD RDNA3, wave32), where has_wmma().
bool has_wmma(const std::string& arch, int warp_size);
std::unique_ptr<GemmRunner> make_wmma_rdna3(DType dtype, Shape s, const void* A, const void* B, void* C,
                                            const void* bias, Act act);

}  // namespace gemm
}  // namespace bwprof
