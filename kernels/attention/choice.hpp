// The attention kernels' rules that are plain arithmetic on the shape (gpu.hip chooses the kernel
// and its key split by them, the kernels size their rings by them); no GPU headers, so that the
// CPU tests check them (tests/cpp/attention_rules_test.cpp). Each rule: what, then why; the
// measurements behind them are in docs/notes/attention.md, one section a rule.
#pragma once
#include <algorithm>
#include <cstdint>

namespace bwprof {
namespace attention {

// Its query rows per KV head: at most 32 (16 at head dim 256). Its splits: rows x splits of a KV
// head within kDecodeMaxMerge (the last block's merge holds a weight for each in shared memory).
constexpr int kDecodeMaxMerge = 4096;
// The deepest ring the decode kernel takes.
constexpr int kDecodeStagesMax = 8;
// The decode kernel's warps a block and keys a warp's step.
constexpr int kDecodeWarps = 4, kDecodeStepKeys = 16;
// The decode kernel's default ring, in steps of 16 keys each warp holds (stages - 1 in flight while
// it computes one): 5 at head dim 64, 3 up to 128, 2 at 256, and at 80 4 up to kDecodeShortKeys keys
// and 2 beyond: the depths that were fastest on the H100 and H200 sweeps at each head dim.
constexpr std::int64_t kDecodeShortKeys = 8192;
constexpr int decode_ring_long(int d) { return d <= 64 ? 5 : d == 80 ? 2 : d <= 128 ? 3 : 2; }
constexpr int decode_ring_short(int d) { return d == 80 ? 4 : decode_ring_long(d); }
constexpr int decode_default_ring(int d, std::int64_t seq_kv) {
  return seq_kv <= kDecodeShortKeys ? decode_ring_short(d) : decode_ring_long(d);
}
// Where nothing is split (the KV heads alone fill the GPU) and each KV head has kDecodeLongKeys keys
// or more: the ring that keeps the bytes an SM needs in flight (blocks an SM x 4 warps x (ring - 1)
// steps of K and V), at least 2 steps, never deeper than the default. Those bytes are the SM's share
// of the memory's theoretical bandwidth times kDecodeFlightSeconds (Little's law; 32 KB at the H100's
// 3352 GB/s over 132 SMs, where it was fitted), or kDecodeFlightBytes where the bandwidth is unknown.
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
// Whether the decode kernel takes a KV head's `rows` query rows (query positions x the query heads
// that share the KV head) at head dim d.
inline bool decode_takes_rows(std::int64_t rows, int d) { return rows <= 16 || (rows <= 32 && d <= 128); }
// Rows of one flash tile for `tile` at head dim d.
inline int flash_tile_rows(int tile, int d) { return d > 128 || tile == 0 ? 64 : 128; }
// Keys per flash tile at head dim d (either tile).
inline int flash_tile_keys(int d) { return d > 128 ? 32 : 64; }


// How many blocks share one row's keys (flash decoding), and the keys each takes.
struct KeySplit {
  int splits, split_len;
};
// The flash kernel's tile (0: 64 rows x 64 keys, 2: 128 x 64; flash_tile_rows): 128 x 64, the
// fastest of the three measured, except 64 rows where a KV head has no more.
inline int flash_tile(std::int64_t rows) { return rows <= 64 ? 0 : 2; }
// Keys split while the blocks do not fill two rounds of the GPU (2-3 blocks an SM fit), each split
// keeping at least 4 key tiles.
inline KeySplit flash_split(std::int64_t batch, std::int64_t kv_heads, std::int64_t rows, std::int64_t seq_kv, int d,
                            int tile, std::int64_t sms) {
  const std::int64_t tiles = (rows + flash_tile_rows(tile, d) - 1) / flash_tile_rows(tile, d);
  const std::int64_t blocks = tiles * batch * kv_heads;
  const int keys = flash_tile_keys(d);
  std::int64_t splits = 1;
  if (blocks < 4 * sms)
    splits = std::min<std::int64_t>({(4 * sms + blocks - 1) / blocks, (seq_kv + 4 * keys - 1) / (4 * keys), 65535});
  return {static_cast<int>(splits), static_cast<int>(((seq_kv + splits - 1) / splits + keys - 1) / keys * keys)};
}
// Decode reads each key and value once: its time is their bytes plus what every block pays once
// (launch, first loads, merges). Keys split so that the blocks make half a wave of the GPU up to
// head dim 128 (fewer splits to merge won at 10 of 12 points), a whole wave at 256 and paged
// (long streams gain), each split keeping at least 128 keys (256 paged: the shortest lost), in
// steps of 16 (a warp's step), within what the merge holds. per_sm: the kernel's blocks an SM (the
// runtime's answer).
inline KeySplit decode_split(std::int64_t batch, std::int64_t kv_heads, std::int64_t rows, std::int64_t seq_kv, int d,
                             bool paged, std::int64_t per_sm, std::int64_t sms) {
  const std::int64_t blocks = batch * kv_heads;
  const double waves = d > 128 || paged ? 1.0 : 0.5;
  const std::int64_t least = paged ? 256 : 128;  // keys a split keeps
  const std::int64_t slots = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::max(0.05, waves) * per_sm * sms));
  constexpr int step = kDecodeStepKeys;
  const std::int64_t most = std::min<std::int64_t>({(seq_kv + step - 1) / step, kDecodeMaxMerge / rows, 65535});
  const std::int64_t splits =
      std::min<std::int64_t>({std::max<std::int64_t>(1, slots / blocks), (seq_kv + least - 1) / least, most});
  return {static_cast<int>(splits), static_cast<int>(((seq_kv + splits - 1) / splits + step - 1) / step * step)};
}
// The rows kernel (G query heads a block; blocks = batch x kv_heads x (group / G) x seq_q): keys
// split until about 8 blocks an SM, each split at least 128 keys.
inline KeySplit rows_split(std::int64_t blocks, std::int64_t seq_kv, std::int64_t sms) {
  const std::int64_t want = 8ll * sms;
  std::int64_t splits = 1;
  if (blocks < want) splits = std::min<std::int64_t>((want + blocks - 1) / blocks, (seq_kv + 127) / 128);
  const std::int64_t s = std::max<std::int64_t>(splits, 1);
  return {static_cast<int>(splits), static_cast<int>((seq_kv + s - 1) / s)};
}
// Split partial rows (rows_all x splits) stay within kMaxPartialRows, or one a row where the rows
// alone are more (then no split): the family's footprint (family.cpp) counts on it. `step`: the
// keys a split is a multiple of. Returns the split that runs.
constexpr std::int64_t kMaxPartialRows = 16384;
inline KeySplit cap_partial_rows(KeySplit k, std::int64_t rows_all, std::int64_t seq_kv, int step) {
  const std::int64_t cap = std::max<std::int64_t>(1, kMaxPartialRows / rows_all);
  if ((seq_kv + k.split_len - 1) / k.split_len > cap)
    k.split_len = static_cast<int>(((seq_kv + cap - 1) / cap + step - 1) / step * step);
  k.splits = static_cast<int>((seq_kv + k.split_len - 1) / k.split_len);
  return k;
}

}  // namespace attention
}  // namespace bwprof
