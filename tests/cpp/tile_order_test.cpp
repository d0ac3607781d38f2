// The Hopper prefill kernel's tile order (kernels/attention/tile_order.hpp): every tile once, the row
// tiles' key counts, and the host's choice of the chunk of heads.
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "attention/tile_order.hpp"

using namespace bwprof::attention;

TEST(TileOrder, EveryTileOnceInChunkOrder) {
  for (int bh_total : {1, 3, 8, 13, 32}) {
    for (int row_tiles : {1, 2, 7, 32}) {
      for (int chunk : {1, 2, 4, 5, 8, 32}) {
        std::set<std::pair<int, int>> seen;
        int last_chunk = 0, last_r = 0;
        for (int tile = 0; tile < bh_total * row_tiles; ++tile) {
          int bh = -1, r = -1;
          tile_at(tile, row_tiles, bh_total, chunk, bh, r);
          ASSERT_GE(bh, 0);
          ASSERT_LT(bh, bh_total);
          ASSERT_GE(r, 0);
          ASSERT_LT(r, row_tiles);
          ASSERT_TRUE(seen.insert({bh, r}).second) << "tile " << tile << " repeats bh " << bh << " r " << r;
          // Chunks one after another; within one, r never goes back.
          const int ch = bh / chunk;
          ASSERT_GE(ch, last_chunk);
          if (ch == last_chunk) ASSERT_GE(r, last_r);
          last_chunk = ch, last_r = r;
        }
        EXPECT_EQ(static_cast<int>(seen.size()), bh_total * row_tiles);
      }
    }
  }
}

TEST(TileOrder, ChunkOfOneIsHeadMajor) {
  int bh = 0, r = 0;
  tile_at(0, 32, 32, 1, bh, r);
  EXPECT_EQ(bh, 0);
  EXPECT_EQ(r, 0);
  tile_at(33, 32, 32, 1, bh, r);
  EXPECT_EQ(bh, 1);
  EXPECT_EQ(r, 1);
  tile_at(33, 32, 32, 32, bh, r);  // all heads: row tile 1 of head 1
  EXPECT_EQ(bh, 1);
  EXPECT_EQ(r, 1);
  tile_at(34, 32, 32, 32, bh, r);
  EXPECT_EQ(bh, 2);
  EXPECT_EQ(r, 1);
}

TEST(TileOrder, RowKeyTiles) {
  // Causal, square: the last row tile (rows 3968..4095) reads all 32 key tiles, the first one.
  EXPECT_EQ(row_key_tiles(3968, 128, 128, 4096, 4096, true), 32);
  EXPECT_EQ(row_key_tiles(0, 128, 128, 4096, 4096, true), 1);
  EXPECT_EQ(row_key_tiles(0, 128, 128, 4096, 4096, false), 32);
  // More keys than queries: row i sees keys up to i + 100.
  EXPECT_EQ(row_key_tiles(0, 128, 64, 100, 200, true), 4);  // rows 0..99 see keys up to 199
  EXPECT_EQ(row_key_tiles(0, 128, 64, 300, 400, true), 4);  // rows 0..127 see up to 227: 228 keys
  // A short last row tile.
  EXPECT_EQ(row_key_tiles(128, 128, 128, 130, 130, true), 2);
  const std::vector<int> c = row_tile_costs(4, 128, 128, 512, 512, true);
  EXPECT_EQ(c, (std::vector<int>{5, 4, 3, 2}));
}

TEST(TileOrder, ChoiceEndsShortTilesLast) {
  // B1 H32/8 S4096 causal on 132 blocks: one head at a time leaves the last head's long tiles for the
  // end; the choice takes more heads a chunk and finishes sooner.
  const std::vector<int> cost = row_tile_costs(32, 128, 128, 4096, 4096, true);
  const int chunk = choose_head_chunk(cost, 32, 4, 132);
  EXPECT_GT(chunk, 1);
  const auto head_major = order_finish(cost, 32, 1, 132), chosen = order_finish(cost, 32, chunk, 132);
  EXPECT_LT(chosen * 100, head_major * 95) << chosen << " against " << head_major;
  std::int64_t total = 0;
  for (int c : cost) total += 32 * c;
  EXPECT_LE(chosen * 132 * 100, total * 102);  // within 2 % of a perfect share
}

TEST(TileOrder, ChoiceKeepsOneHeadWhereOrderDoesNotMatter) {
  // Without a mask every tile costs the same; many tiles per block: any order ends together.
  EXPECT_EQ(choose_head_chunk(row_tile_costs(32, 128, 128, 4096, 4096, false), 32, 4, 132), 1);
  EXPECT_EQ(choose_head_chunk(row_tile_costs(128, 128, 128, 16384, 16384, true), 1024, 8, 132), 1);
  EXPECT_EQ(choose_head_chunk(row_tile_costs(4, 128, 128, 512, 512, true), 1, 1, 132), 1);
  EXPECT_EQ(choose_head_chunk(row_tile_costs(4, 128, 128, 512, 512, true), 8, 1, 1), 1);
}
