// The model shapes the default suite measures, shared by the families' suite configurations.
#pragma once

namespace bwprof {
namespace suite {

// A 0.5-billion-parameter LLM's layers (the seeds' benchmark table): hidden 896, FFN 4864,
// 14 query heads and 2 KV heads of 64.
constexpr int kHidden = 896, kFfn = 4864, kHeads = 14, kKvHeads = 2, kHeadDim = 64;
// A transformer encoder's 768-wide layers: 24 heads of 32, 64 tokens.
constexpr int kEncHidden = 768, kEncHeads = 24, kEncHeadDim = 32, kEncTokens = 64;

}  // namespace suite
}  // namespace bwprof
