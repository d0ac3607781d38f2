// KV-cache append on the GPU: every thread moves one 16-byte piece of a new K and V row to its
// place in a contiguous or a paged cache.
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "kv_cache/kv_cache.hpp"

namespace bwprof {

namespace {

constexpr int kBlock = 256;

// W: bytes moved per thread (16 when head_dim * element size is a multiple of 16, else the element).
template <class W, bool PAGED>
__global__ void __launch_bounds__(kBlock) bwprof_kv_cache_append(
    const W* __restrict__ k_new, const W* __restrict__ v_new, W* __restrict__ k_cache, W* __restrict__ v_cache,
    const int* __restrict__ positions, const int* __restrict__ block_table, int kv_heads, int max_seq,
    int new_tokens, int row_words, int block_size, int blocks_per_seq, std::size_t total_words) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total_words; i += stride) {
    const std::size_t r = i / row_words;  // source row: (b, h, t)
    const int w = static_cast<int>(i - r * row_words);
    const int t = static_cast<int>(r % new_tokens);
    const std::size_t bh = r / new_tokens;
    const int h = static_cast<int>(bh % kv_heads);
    const int b = static_cast<int>(bh / kv_heads);
    const int pos = positions[b] + t;
    std::size_t dst;
    if (PAGED) {
      const int blk = block_table[static_cast<std::size_t>(b) * blocks_per_seq + pos / block_size];
      dst = ((static_cast<std::size_t>(blk) * kv_heads + h) * block_size + pos % block_size) * row_words + w;
    } else {
      dst = (bh * max_seq + pos) * row_words + w;
    }
    const W kx = k_new[i], vx = v_new[i];
    k_cache[dst] = kx;
    v_cache[dst] = vx;
  }
}

class KvAppendGpu final : public KernelInstance {
 public:
  KvAppendGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_kv_append_data(p)) {
    for (const char* n : {"batch", "kv_heads", "max_seq", "new_tokens", "head_dim"})
      if (p.i(n) > 2147483647) throw InvalidArgument(std::string(n) + ": at most 2^31-1 on the GPU");
    kn_ = DeviceBuffer::from(host_.k_new, "new K");
    vn_ = DeviceBuffer::from(host_.v_new, "new V");
    kc_ = DeviceBuffer::from(host_.k_cache, "K cache");
    vc_ = DeviceBuffer::from(host_.v_cache, "V cache");
    pos_ = DeviceBuffer(host_.positions.size() * 4, "positions");
    pos_.upload(host_.positions.data(), host_.positions.size() * 4);
    table_ = DeviceBuffer(std::max<std::size_t>(host_.block_table.size(), 1) * 4, "block table");
    if (!host_.block_table.empty()) table_.upload(host_.block_table.data(), host_.block_table.size() * 4);
    row_bytes_ = p.i("head_dim") * dtype_size(p.dtype);
    wide_ = row_bytes_ % 16 == 0;
  }
  void launch() override {
    if (wide_) run<uint4>(); else if (p_.dtype == DType::kF32) run<float>(); else run<unsigned short>();
  }
  Check check() override {
    g_.synchronize();
    kc_.to(host_.k_cache);
    vc_.to(host_.v_cache);
    return kv_append_check(host_, p_);
  }
  Resources resources() const override {
    return host_.paged ? kernel_resources(bwprof_kv_cache_append<uint4, true>, kBlock)
                       : kernel_resources(bwprof_kv_cache_append<uint4, false>, kBlock);
  }

 private:
  template <class W>
  void run() {
    const int row_words = static_cast<int>(row_bytes_ / sizeof(W));
    const std::size_t total = host_.k_new.bytes() / sizeof(W);
    const unsigned grid = grid_for(total, kBlock, g_.sm_count(), 16);
    auto k = host_.paged ? bwprof_kv_cache_append<W, true> : bwprof_kv_cache_append<W, false>;
    k<<<grid, kBlock, 0, g_.stream()>>>(kn_.get<W>(), vn_.get<W>(), kc_.get<W>(), vc_.get<W>(), pos_.get<int>(),
                                        table_.get<int>(), static_cast<int>(p_.i("kv_heads")),
                                        static_cast<int>(p_.i("max_seq")), static_cast<int>(p_.i("new_tokens")),
                                        row_words, static_cast<int>(host_.block_size),
                                        static_cast<int>(host_.blocks_per_seq), total);
    BWPROF_CHECK_LAUNCH("bwprof_kv_cache_append");
  }

  GpuBackend& g_;
  Problem p_;
  KvAppendData host_;
  DeviceBuffer kn_, vn_, kc_, vc_, pos_, table_;
  std::size_t row_bytes_ = 0;
  bool wide_ = false;
};

}  // namespace

std::unique_ptr<KernelInstance> make_kv_cache_append_gpu(Backend& b, const Problem& p) {
  return std::make_unique<KvAppendGpu>(as_gpu(b), p);
}

}  // namespace bwprof
