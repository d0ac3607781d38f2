// The `tensor` GEMM on operands the copy engine cannot address (rows of an odd width start at any
// 2-byte boundary; TMA needs 16-byte aligned rows): A and/or B copied each run into scratch whose
// rows are padded to a multiple of 8 elements, then the aligned wgmma kernel on the copies. The
// copy is part of every timed run (the inputs could change between runs), and the scratch is part
// of the family's footprint (choice.hpp says when dispatch.hip takes this path). Rows can be padded
// to 64 elements (128 bytes, the copy engine's swizzle line) instead of 8, and then whatever
// operand's rows are not a multiple of 128 bytes is copied (choice.hpp's pad128_pays).
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cstdint>
#include <string>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_stream_load.hpp"
#include "gemm/engines.hpp"
#include "gemm/choice.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// dst[r][c] = src[r * lds + c] for c < cols, dst's rows ldd (a multiple of 8) apart and 16-byte
// aligned. A group of 32 lanes copies 256 elements of a row: each lane stores one aligned 16-byte
// word and loads the aligned source word where its 8 elements start, the next one from the lane
// beside it (the 32nd lane loads it), shifted by the row's offset (shift_b16). Where the source
// words would reach outside src (its last row, a src not on 16 bytes) it reads element by element.
// Columns cols..ldd-1 of dst hold whatever followed in src: the copy engine never reads them (its
// tensor map ends at cols).
__global__ void __launch_bounds__(256) bwprof_gemm_pad_copy(const unsigned short* __restrict__ src,
                                                            unsigned short* __restrict__ dst, int rows, int cols,
                                                            int lds, int ldd) {
  const int lane = threadIdx.x % 32;
  const std::int64_t slabs = (cols + 255) / 256, items = static_cast<std::int64_t>(rows) * slabs;
  const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(src);
  const std::uintptr_t hi = reinterpret_cast<std::uintptr_t>(src + (static_cast<std::size_t>(rows) - 1) * lds + cols);
  for (std::int64_t it = static_cast<std::int64_t>(blockIdx.x) * 8 + threadIdx.x / 32; it < items;
       it += static_cast<std::int64_t>(gridDim.x) * 8) {
    const int r = static_cast<int>(it / slabs), c0 = static_cast<int>(it % slabs) * 256, c = c0 + lane * 8;
    const std::uintptr_t row = reinterpret_cast<std::uintptr_t>(src + static_cast<std::size_t>(r) * lds + c0);
    const std::uintptr_t a0 = row & ~std::uintptr_t(15);
    const unsigned shift = static_cast<unsigned>(row - a0) / 2;
    const bool fast = a0 >= lo && a0 + 16 * 33 <= hi;  // uniform over the 32 lanes
    uint4 w = make_uint4(0, 0, 0, 0), x = make_uint4(0, 0, 0, 0);
    load_stream_if(w, reinterpret_cast<const void*>(a0 + 16 * lane), fast);
    load_stream_if(x, reinterpret_cast<const void*>(a0 + 16 * 32), fast && lane == 31 && shift != 0);
    uint4 v;
    if (fast) {
      uint4 nb;
      nb.x = BWPROF_SHFL_DOWN32(w.x, 1), nb.y = BWPROF_SHFL_DOWN32(w.y, 1);
      nb.z = BWPROF_SHFL_DOWN32(w.z, 1), nb.w = BWPROF_SHFL_DOWN32(w.w, 1);
      if (lane == 31) nb = x;
      v = shift_b16(w, nb, shift);
    } else {
      v = load_b16_tail(src + static_cast<std::size_t>(r) * lds + c, max(0, min(8, cols - c)));
    }
    if (c < cols) *reinterpret_cast<uint4*>(dst + static_cast<std::size_t>(r) * ldd + c) = v;
  }
}

class PaddedRunner final : public GemmRunner {
 public:
  PaddedRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act,
               int align, int tile, std::int64_t splits)
      : s_(s), A_(A), B_(B), sms_(g.sm_count()) {
    gemm::check_int_sizes(s);
    Shape inner = s;
    const void* a = A;
    const void* b = B;
    if (!gemm::tma_addressable(A, s.lda) || s.lda % align) {
      inner.lda = (s.K + align - 1) / align * align;
      pa_ = DeviceBuffer(static_cast<std::size_t>(s.M) * inner.lda * 2, "GEMM A padded copy");
      a = pa_.get();
    }
    if (!gemm::tma_addressable(B, s.ldb) || s.ldb % align) {
      inner.ldb = (s.N + align - 1) / align * align;
      pb_ = DeviceBuffer(static_cast<std::size_t>(s.K) * inner.ldb * 2, "GEMM B padded copy");
      b = pb_.get();
    }
    if (inner.lda > 2147483647 || inner.ldb > 2147483647) BWPROF_INVALID("K/N: too large to pad on the GPU");
    lda2_ = inner.lda, ldb2_ = inner.ldb;
    gemm_ = gemm::make_wgmma_sm90(g, dt, inner, a, b, C, bias, act, tile, splits);
    explain_ = std::string("pad") + (pa_.get() ? " A" : "") + (pb_.get() ? " B" : "") + " to " + std::to_string(2 * align) +
               "-byte rows, then " + gemm_->explain();
  }
  void run(hipStream_t st) override {
    if (pa_.get()) copy(A_, pa_.get(), s_.M, s_.K, s_.lda, lda2_, st);
    if (pb_.get()) copy(B_, pb_.get(), s_.K, s_.N, s_.ldb, ldb2_, st);
    gemm_->run(st);
  }
  Resources resources() const override { return gemm_->resources(); }
  std::string explain() const override { return explain_; }

 private:
  void copy(const void* src, void* dst, std::int64_t rows, std::int64_t cols, std::int64_t lds, std::int64_t ldd,
            hipStream_t st) {
    const std::size_t items = static_cast<std::size_t>(rows) * ((cols + 255) / 256);
    bwprof_gemm_pad_copy<<<grid_for(items, 8, sms_, 16), 256, 0, st>>>(
        static_cast<const unsigned short*>(src), static_cast<unsigned short*>(dst), int(rows), int(cols), int(lds),
        int(ldd));
    BWPROF_CHECK_LAUNCH("bwprof_gemm_pad_copy");
  }
  Shape s_;
  const void* A_;
  const void* B_;
  int sms_;
  std::int64_t lda2_ = 0, ldb2_ = 0;
  DeviceBuffer pa_, pb_;
  std::unique_ptr<GemmRunner> gemm_;
  std::string explain_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_padded_wgmma(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                                    void* C, const void* bias, Act act, int align, int tile,
                                                    std::int64_t splits) {
  if (align != 8 && align != 64) BWPROF_INVALID("padded GEMM: rows padded to 8 or 64 elements");
  return std::make_unique<PaddedRunner>(g, dtype, s, A, B, C, bias, act, align, tile, splits);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
