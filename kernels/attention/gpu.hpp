// The GPU side of the attention family (GPU compilers only): the K/V layout the kernels read
// through, and the launchers of its kernels: rows.hip (vector units: FP32, AMD, NVIDIA before
// sm_80), and for FP16 and BF16 on NVIDIA matrix units flash_sm80.hpp (sm_80+, any shape),
// decode_sm80.hpp (sm_80+, a few query rows per KV head) and flash_sm90.hip (Hopper, prefill).
// gpu.hip chooses among them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "bwprof/dtype.hpp"
#include "bwprof/kernel.hpp"
#include "attention/choice.hpp"
#include "common/gpu_runtime.hpp"

namespace bwprof {
class GpuBackend;
namespace attention {

// Where key/value position `pos` of (sequence b, KV head h) starts.
struct KvLayout {
  const int* table;  // paged: [batch, blocks_per_seq]
  int kv_heads, seq_kv, block_size, blocks_per_seq;
  template <bool PAGED, int D>
  __device__ __forceinline__ std::size_t offset(int b, int h, int pos) const {
    if (!PAGED) return ((static_cast<std::size_t>(b) * kv_heads + h) * seq_kv + pos) * D;
    const int blk = table[b * blocks_per_seq + pos / block_size];
    return ((static_cast<std::size_t>(blk) * kv_heads + h) * block_size + pos % block_size) * D;
  }
};

// One launch's arguments, filled once by the instance.
struct Launch {
  const void *Q, *K, *V;
  void* O;
  float *ws_o, *ws_ml;  // the splits' partials (splits > 1), merged by combine() (decode: by its last block)
  int* arrivals;        // decode with splits > 1: splits arrived per (sequence, KV head), zero between launches
  KvLayout kv;
  std::int64_t B, H, Hkv, Sq;
  std::int64_t kv_rows;  // rows of D elements in the K (and V) buffer
  int D;          // 32, 64, 80, 96, 128 or 256
  int group;      // query heads per KV head
  int G;          // rows kernel: query heads per block
  int splits;     // blocks sharing one row's keys (flash decoding)
  int split_len;  // keys per split (the flash kernel: a multiple of its key tile)
  float scale_log2;
  bool causal, paged;
  DType dtype;
  hipStream_t stream;
  int decode_stages = 0;  // decode: steps of 16 keys in each warp's ring (0: the kernel's default for the head dim)
};

// Launches the rows kernel (and the merge of its splits) in `dtype`, or (launch false) returns
// the kernel's resources.
Resources rows(const Launch& l, DType dtype, bool launch);
// Merges the splits' partials into O (splits > 1; rows.hip).
void combine(const Launch& l, bool launch);
// The matrix-unit kernel for FP16 / BF16 with tile shape `tile` (0 or 2: flash_sm80.hpp, choice.hpp's
// flash_tile; CUDA builds only).
Resources flash_f16(const Launch& l, int tile, bool launch);
Resources flash_bf16(const Launch& l, int tile, bool launch);
// The decode kernel for FP16 / BF16 (decode_sm80.hpp; CUDA builds only), where decode_takes().
Resources decode_f16(const Launch& l, bool launch);
Resources decode_bf16(const Launch& l, bool launch);
inline bool decode_takes(const Launch& l) { return decode_takes_rows(l.Sq * l.group, l.D); }
// The Hopper prefill kernel (flash_sm90.hip: wgmma + TMA; sm_90a builds, FP16 and BF16, K/V
// contiguous or paged in pages of any size: by the copy engine where pages are whole 8-row groups
// that divide its key tile, else by cp.async): its tensor maps are made once for the launch's
// buffers. sm90_takes says where it can run; make_flash_sm90 returns null elsewhere.
class FlashSm90 {
 public:
  virtual ~FlashSm90() = default;
  virtual Resources run(const Launch& l, bool launch) = 0;
};
bool sm90_takes(const GpuBackend& g, const Launch& l);
std::unique_ptr<FlashSm90> make_flash_sm90(GpuBackend& g, const Launch& l);
// The tiles of one KV head's rows, `rows` rows a tile.
inline std::int64_t flash_row_tiles(const Launch& l, int rows) { return (l.Sq * l.group + rows - 1) / rows; }

}  // namespace attention
}  // namespace bwprof
