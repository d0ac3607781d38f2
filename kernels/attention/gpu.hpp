// The GPU side of the attention family (GPU compilers only): the K/V layout the kernels read
// through, and the launchers of its two kernels: rows.hip (FP32, decode, short queries, AMD) and
// prefill_sm80.hip (FP16 on NVIDIA matrix units, sm_80+). gpu.hip chooses between them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "bwprof/dtype.hpp"
#include "bwprof/kernel.hpp"
#include "common/gpu_runtime.hpp"

namespace bwprof {
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
  float *ws_o, *ws_ml;  // the rows kernel's split partials (splits > 1)
  KvLayout kv;
  std::int64_t B, H, Hkv, Sq;
  int D;          // 32, 64 or 128
  int group;      // query heads per KV head
  int G;          // rows kernel: query heads per block
  int splits;     // rows kernel: blocks sharing one row's keys (flash decoding)
  int split_len;  // rows kernel: keys per split
  float scale_log2;
  bool causal, paged;
  hipStream_t stream;
};

// Launches the rows kernel (and the merge of its splits) in `dtype`, or (launch false) returns
// the kernel's resources.
Resources rows(const Launch& l, DType dtype, bool launch);
// The same for the FP16 prefill kernel with tile shape `tile` (0, 1 or 2; CUDA builds only).
Resources prefill(const Launch& l, int tile, bool launch);

}  // namespace attention
}  // namespace bwprof
