// The order in which the Hopper prefill kernel's persistent blocks take their row tiles (flash_sm90.hip:
// tile blockIdx.x first, then the next untaken one from a counter), and the host's choice of it. Plain
// C++ (the kernel and the host tests share it).
//   The tiles go in chunks of `chunk` heads (batch x query heads, the query heads of a KV head next to
//   each other): within a chunk the row tiles from the last (under a causal mask the longest first),
//   for each row tile the chunk's heads one after another. A chunk of one head keeps a head's K/V in L2
//   while its tiles run; but under a causal mask the last head's long tiles then come last, and the
//   blocks that take them run on alone at the end (B1 H32/8 S4096 causal: 82 % of the SMs' cycles
//   active, H200 ncu). A chunk of every head takes the longest tiles of all heads first, and the
//   tiles left at the end are short.
//   The host simulates the blocks taking the tiles in order (a tile costing its key tiles plus one for
//   its Q and O) and keeps the smallest chunk (one head, the KV group's heads and their doublings, all
//   heads) that finishes within 1 % of the best.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "common/host_device.hpp"

namespace bwprof {
namespace attention {

// Key tiles of bc keys that the row tile of rows q0 .. q0 + br - 1 reads (under a causal mask, up to
// its last row's last visible key; query row i sees keys up to i + seq_kv - seq_q).
BWPROF_HD inline int row_key_tiles(int q0, int br, int bc, int seq_q, int seq_kv, bool causal) {
  const int q_last = std::min(q0 + br, seq_q) - 1;
  const int k_stop = causal ? std::min(seq_kv, q_last + seq_kv - seq_q + 1) : seq_kv;
  return (k_stop + bc - 1) / bc;
}

// Tile `tile` of the order: head bh (of bh_total) and r, the row tile counted from the last (its rows
// start at (row_tiles - 1 - r) * br).
BWPROF_HD inline void tile_at(int tile, int row_tiles, int bh_total, int chunk, int& bh, int& r) {
  const int per = chunk * row_tiles;  // a whole chunk's tiles
  const int ch = tile / per, in = tile - ch * per, h0 = ch * chunk;
  const int heads = bh_total - h0 < chunk ? bh_total - h0 : chunk;  // the last chunk may be short
  r = heads == 1 ? in : in / heads;  // (a chunk of one head: no second division)
  bh = h0 + in - r * heads;
}

// Each row tile's cost, r counted from the last: its key tiles, and one for its Q and O.
inline std::vector<int> row_tile_costs(int row_tiles, int br, int bc, int seq_q, int seq_kv, bool causal) {
  std::vector<int> cost(row_tiles);
  for (int r = 0; r < row_tiles; ++r) cost[r] = 1 + row_key_tiles((row_tiles - 1 - r) * br, br, bc, seq_q, seq_kv, causal);
  return cost;
}

// When `workers` blocks take the tiles in order, the time the last one finishes (cost[r]: row tile r's).
inline std::int64_t order_finish(const std::vector<int>& cost, int bh_total, int chunk, int workers) {
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<std::int64_t>> free_at;
  for (int w = 0; w < workers; ++w) free_at.push(0);
  const int rt = static_cast<int>(cost.size());
  std::int64_t end = 0;
  for (int tile = 0; tile < rt * bh_total; ++tile) {
    int bh = 0, r = 0;
    tile_at(tile, rt, bh_total, chunk, bh, r);
    const std::int64_t t = free_at.top() + cost[r];
    free_at.pop();
    free_at.push(t);
    end = std::max(end, t);
  }
  return end;
}

// The chunk for a launch of `workers` persistent blocks (cost as above; group: query heads a KV head).
inline int choose_head_chunk(const std::vector<int>& cost, int bh_total, int group, int workers) {
  std::int64_t total = 0;
  int most = 0;
  for (int c : cost) total += c, most = std::max(most, c);
  total *= bh_total;
  // No tile is long beside a block's share of the work: every order ends within 1 % of it.
  if (workers <= 1 || bh_total <= 1 || static_cast<std::int64_t>(most) * workers * 100 <= total) return 1;
  std::vector<int> chunks{1};
  for (int g = std::max(group, 2); g < bh_total; g *= 2) chunks.push_back(g);
  chunks.push_back(bh_total);
  std::vector<std::int64_t> fin;
  for (int g : chunks) fin.push_back(order_finish(cost, bh_total, g, workers));
  const std::int64_t best = *std::min_element(fin.begin(), fin.end());
  for (std::size_t i = 0; i < chunks.size(); ++i)
    if (fin[i] * 100 <= best * 101) return chunks[i];
  return bh_total;
}

}  // namespace attention
}  // namespace bwprof
