// The attention kernels' key splits (kernels/attention/choice.hpp) as gpu.hip applies them: examples,
// and a digest of every answer over a grid of shapes and devices, so that a change of the rules that
// moves a default answer fails here (the digest was taken from the rules as they stood at 03f5f94,
// written as functions, before their refactoring).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "attention/choice.hpp"
#include "test_util.hpp"

using namespace bwprof::attention;

TEST(AttentionRules, FlashSplitsKeysUntilTheBlocksFillTheGpu) {
  // 512 rows a KV head (S128, 4 query heads a KV head), 8 KV heads: 4 tiles of 128 rows each, 32
  // blocks, so 1024 keys split in 4 (each split at least 4 key tiles of 64).
  EXPECT_EQ(flash_tile(512), 2);
  EXPECT_EQ(flash_tile(64), 0);
  KeySplit k = flash_split(1, 8, 512, 1024, 64, 2, 132);
  EXPECT_EQ(k.splits, 4);
  EXPECT_EQ(k.split_len, 256);
  k = flash_split(16, 8, 4096, 4096, 128, 2, 132);  // 4096 blocks: no split
  EXPECT_EQ(k.splits, 1);
  EXPECT_EQ(k.split_len, 4096);
}

TEST(AttentionRules, DecodeSplitsToHalfAWaveOrAWhole) {
  // B1 H32/8 S8192 D64: 8 KV heads, 2 blocks an SM: half a wave is 132 blocks, 16 splits of 512 keys.
  KeySplit k = decode_split(1, 8, 4, 8192, 64, false, 2, 132);
  EXPECT_EQ(k.splits, 16);
  EXPECT_EQ(k.split_len, 512);
  // Paged K/V and head dim 256 fill a whole wave; splits keep at least 256 keys paged.
  EXPECT_EQ(decode_split(1, 8, 4, 8192, 64, true, 2, 132).splits, 32);
  EXPECT_EQ(decode_split(1, 8, 4, 4096, 64, true, 2, 132).splits, 16);
  EXPECT_EQ(decode_split(1, 8, 4, 8192, 256, false, 2, 132).splits, 33);
  // The merge holds a weight for each of rows x splits: 32 rows at most 128 splits.
  EXPECT_EQ(decode_split(1, 1, 32, 1 << 20, 64, false, 64, 132).splits, 128);
  EXPECT_TRUE(decode_takes_rows(16, 256));
  EXPECT_FALSE(decode_takes_rows(32, 256));
  EXPECT_TRUE(decode_takes_rows(32, 128));
  EXPECT_FALSE(decode_takes_rows(33, 64));
}

TEST(AttentionRules, PartialRowsStayBounded) {
  // 4096 rows x 8 splits would pass 16384 partial rows: 4 splits at most.
  const KeySplit k = cap_partial_rows(KeySplit{8, 512}, 4096, 4096, 64);
  EXPECT_EQ(k.splits, 4);
  EXPECT_EQ(k.split_len, 1024);
  EXPECT_EQ(cap_partial_rows(KeySplit{1, 100}, 20000, 100, 16).splits, 1);
}

TEST(AttentionRules, EveryDefaultAnswerOverTheGrid) {
  Digest d;
  const std::int64_t seqs[] = {1, 15, 16, 17, 64, 100, 127, 128, 129, 255, 256, 1000, 1024, 4096, 8192, 16384, 100000};
  const std::int64_t rows_of[] = {1, 2, 4, 8, 16, 24, 32, 33, 64, 65, 128, 512, 4096, 65536};
  for (std::int64_t b : {1, 2, 4, 16, 64})
    for (std::int64_t hkv : {1, 2, 8, 32})
      for (std::int64_t rows : rows_of)
        for (std::int64_t skv : seqs)
          for (int dim : {32, 64, 80, 96, 128, 256})
            for (std::int64_t sms : {132, 108, 78}) {
              std::string line = std::to_string(b) + " " + std::to_string(hkv) + " " + std::to_string(rows) + " " +
                                 std::to_string(skv) + " " + std::to_string(dim) + " " + std::to_string(sms) + ":";
              const int tile = flash_tile(rows);
              const KeySplit f = flash_split(b, hkv, rows, skv, dim, tile, sms);
              const KeySplit fc = cap_partial_rows(f, b * hkv * rows, skv, flash_tile_keys(dim));
              line += " f" + std::to_string(tile) + "/" + std::to_string(f.splits) + "/" + std::to_string(f.split_len) +
                      "/" + std::to_string(fc.splits) + "/" + std::to_string(fc.split_len);
              if (decode_takes_rows(rows, dim))
                for (bool paged : {false, true})
                  for (std::int64_t per_sm : {1, 2, 4}) {
                    const KeySplit k = decode_split(b, hkv, rows, skv, dim, paged, per_sm, sms);
                    const KeySplit kc = cap_partial_rows(k, b * hkv * rows, skv, kDecodeStepKeys);
                    line += " d" + std::to_string(k.splits) + "/" + std::to_string(k.split_len) + "/" +
                            std::to_string(kc.splits) + "/" + std::to_string(kc.split_len);
                    for (double bw : {0.0, 3352.3, 4800.0})
                      line += "/" + std::to_string(decode_unsplit_ring(dim, skv, b * hkv, sms, bw));
                  }
              const KeySplit r = rows_split(b * hkv * rows, skv, sms);
              const KeySplit rc = cap_partial_rows(r, b * hkv * rows, skv, 1);
              line += " r" + std::to_string(r.splits) + "/" + std::to_string(r.split_len) + "/" + std::to_string(rc.splits) +
                      "/" + std::to_string(rc.split_len);
              d.add(line);
            }
  EXPECT_EQ(d.h, 0x64eaf91e923a05bbull) << std::hex << "digest 0x" << d.h;
}
