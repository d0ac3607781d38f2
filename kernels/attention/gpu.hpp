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
// The matrix-unit kernel for FP16 / BF16 with tile shape `tile` (0, 1 or 2: flash_sm80.hpp; CUDA
// builds only).
Resources flash_f16(const Launch& l, int tile, bool launch);
Resources flash_bf16(const Launch& l, int tile, bool launch);
// The decode kernel for FP16 / BF16 (decode_sm80.hpp; CUDA builds only), where decode_takes().
Resources decode_f16(const Launch& l, bool launch);
Resources decode_bf16(const Launch& l, bool launch);
// Its query rows per KV head: at most 32 (16 at head dim 256). Its splits: rows x splits of a KV
// head within kDecodeMaxMerge (the last block's merge holds a weight for each in shared memory).
constexpr int kDecodeMaxMerge = 4096;
// The deepest ring the decode kernel takes (BWPROF_ATTN_DECODE_STAGES).
constexpr int kDecodeStagesMax = 8;
// The decode kernel's warps a block and keys a warp's step.
constexpr int kDecodeWarps = 4, kDecodeStepKeys = 16;
// The decode kernel's default ring, in steps of 16 keys each warp holds (stages - 1 in flight while
// it computes one; the measurements behind it are in decode_sm80.hpp): 5 at head dim 64, 3 up to
// 128, 2 at 256; at head dim 80, 4 where a KV head has up to kDecodeShortKeys keys, 2 beyond (H200,
// 2026-11-28, harness grid: every D80 point of 16384 keys faster at 2 than at 3, bf16 B4 H64/8
// 56.0 -> 51.9 us, fp16 B4 H64/8 56.5 -> 51.7, bf16 B2 H32/8 33.1 -> 30.5, fp16 B1 H8/8 20.5 -> 19.4;
// not measured on an H100, where 4 had lost to 3 at B4 H64/8).
constexpr std::int64_t kDecodeShortKeys = 8192;
constexpr int decode_ring_long(int d) { return d <= 64 ? 5 : d == 80 ? 2 : d <= 128 ? 3 : 2; }
constexpr int decode_ring_short(int d) { return d == 80 ? 4 : decode_ring_long(d); }
constexpr int decode_default_ring(int d, std::int64_t seq_kv) {
  return seq_kv <= kDecodeShortKeys ? decode_ring_short(d) : decode_ring_long(d);
}
// Where nothing is split (the KV heads alone fill the GPU) and each KV head has kDecodeLongKeys keys
// or more: the ring that keeps the bytes an SM needs in flight (blocks an SM x 4 warps x (ring - 1)
// steps of K and V), at least 2 steps, never deeper than the default. Those bytes are the SM's share
// of the memory's theoretical bandwidth times kDecodeFlightSeconds (Little's law; 32 KB on the H100,
// 3352 GB/s over 132 SMs), or kDecodeFlightBytes where the bandwidth is unknown. H100, 2026-11-28,
// fp16, us (session 9's probe harness and sweeps, bwprof's timing): 256 KV heads (two blocks an SM)
// want 2 steps (B8 H32/32 S1024 D64 31.0 at the default 5 -> 29.1, D128 53.3 -> 52.5); 128 (one an
// SM) want 3 at D64 (B16 H32/8 S4096: 52.3 against 58.7 at 2 and 53.5 at 5) and 2 at D128 (96.2
// against 97.0). On the H200 (faster memory, same SMs: about 47 KB) the deeper rings this gives won
// or tied (2026-11-28, harness grid): B8 H32/32 S1024 D64 23.4 -> 22.5 us at 3, B16 H32/8 S4096 D128
// 73.4 -> 71.2 at 3; B16 H32/8 S4096 D64 (4) and D80 (4), B8 H32/32 S1024 D80 (3) within 0.5 %.
constexpr std::int64_t kDecodeLongKeys = 1024;
constexpr double kDecodeFlightBytes = 32768.0;
constexpr double kDecodeFlightSeconds = kDecodeFlightBytes / (3352.3e9 / 132);
inline int decode_unsplit_ring(int d, std::int64_t seq_kv, std::int64_t blocks, std::int64_t sms,
                               double bandwidth_gbs) {
  const int dflt = decode_default_ring(d, seq_kv);
  if (seq_kv < kDecodeLongKeys || sms < 1) return dflt;
  const double flight = bandwidth_gbs > 0 ? bandwidth_gbs * 1e9 / double(sms) * kDecodeFlightSeconds : kDecodeFlightBytes;
  // K and V (2 bytes an element) of one step of every warp of an SM
  const double step = double((blocks + sms - 1) / sms) * kDecodeWarps * kDecodeStepKeys * d * 2 * 2;
  int ring = 2;
  // (within 1 % counts as reached: the H100's own figure is 32 KB to a few bytes)
  while (ring < dflt && (ring - 1) * step < 0.99 * flight) ++ring;
  return ring;
}
inline bool decode_takes(const Launch& l) {
  const std::int64_t rows = l.Sq * l.group;
  return rows <= 16 || (rows <= 32 && l.D <= 128);
}
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
// Rows of one flash tile for `tile` at head dim d, and the tiles of one KV head's rows.
inline int flash_tile_rows(int tile, int d) { return d > 128 || tile == 0 ? 64 : 128; }
inline std::int64_t flash_row_tiles(const Launch& l, int rows) { return (l.Sq * l.group + rows - 1) / rows; }
// Keys per tile of the same.
inline int flash_tile_keys(int tile, int d) { return d > 128 || tile == 1 ? 32 : 64; }

}  // namespace attention
}  // namespace bwprof
