// STREAM kernels on the GPU: 16-byte accesses, several loads in flight per thread, a grid sized
// to fill every SM; the dot product reduces per block, then once more. The clean read (the size
// curve's read line) reduces per block only.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_stream_load.hpp"
#include "stream/stream.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;
constexpr int kUnroll = 4;     // the dot product's loads in flight per thread
constexpr int kPerThread = 2;  // vectors per thread of the one-pass kernels

enum Op { kCopy, kScale, kAdd, kTriad, kDot, kRead };

// Each thread moves kPerThread 16-byte vectors, a block's vectors adjacent, and the grid covers the
// whole array in one pass (on the H100 this beat a grid-stride loop by about 5 % for a 1 GiB copy:
// docs/notes/gemv.md).
template <class T, int OP>
__global__ void __launch_bounds__(kBlock) bwprof_stream(const T* __restrict__ x, const T* __restrict__ y,
                                                        T* __restrict__ out, float s, std::size_t n) {
  constexpr int V = Elems<T>::kVec;
  const std::size_t nvec = n / V;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const uint4* yv = reinterpret_cast<const uint4*>(y);
  uint4* ov = reinterpret_cast<uint4*>(out);
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x * kPerThread;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kPerThread + threadIdx.x; base < nvec;
       base += step) {
    uint4 a[kPerThread], b[kPerThread];
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const std::size_t i = base + u * blockDim.x;
      if (i < nvec) {
        a[u] = xv[i];
        if (OP == kAdd || OP == kTriad) b[u] = yv[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const std::size_t i = base + u * blockDim.x;
      if (i >= nvec) continue;
      if (OP == kCopy) {
        ov[i] = a[u];
        continue;
      }
      float fa[V], fb[V];
      unpack<T>(a[u], fa);
      if (OP == kAdd || OP == kTriad) unpack<T>(b[u], fb);
#pragma unroll
      for (int e = 0; e < V; ++e) {
        if (OP == kScale) fa[e] = s * fa[e];
        if (OP == kAdd) fa[e] = fa[e] + fb[e];
        if (OP == kTriad) fa[e] = fa[e] + s * fb[e];
      }
      ov[i] = pack<T>(fa);
    }
  }
  // The tail that does not fill a 16-byte vector.
  const std::size_t t = nvec * V + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (t < n) {
    float a = to_f(x[t]);
    if (OP == kScale) a = s * a;
    if (OP == kAdd) a = a + to_f(y[t]);
    if (OP == kTriad) a = a + s * to_f(y[t]);
    out[t] = from_f<T>(a);
  }
}

// One kernel (a plain read: the size-aware ceiling times it from 4 KB up, where a second launch
// would be a second fixed cost): each block writes its partial sum, and the last block to finish
// (a counter, after a fence) adds them up into partial[gridDim.x] and resets the counter.
template <class T>
__global__ void __launch_bounds__(kBlock) bwprof_stream_dot(const T* __restrict__ x, const T* __restrict__ y,
                                                            float* __restrict__ partial, unsigned* __restrict__ done,
                                                            std::size_t n) {
  constexpr int V = Elems<T>::kVec;
  __shared__ float scratch[32];
  const std::size_t nvec = n / V;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const uint4* yv = reinterpret_cast<const uint4*>(y);
  float acc = 0.f;
  for (std::size_t base = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; base < nvec;
       base += stride * kUnroll) {
    uint4 a[kUnroll], b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = base + u * stride;
      if (i < nvec) a[u] = xv[i], b[u] = yv[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * stride >= nvec) continue;
      float fa[V], fb[V];
      unpack<T>(a[u], fa);
      unpack<T>(b[u], fb);
#pragma unroll
      for (int e = 0; e < V; ++e) acc += fa[e] * fb[e];
    }
  }
  const std::size_t t = nvec * V + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (t < n) acc += to_f(x[t]) * to_f(y[t]);
  acc = block_sum(acc, scratch);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc;
    __threadfence();  // the partial is visible to every block before the counter says so
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const volatile float* parts = partial;  // written by other blocks: not from this SM's L1
  float sum = 0.f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) sum += parts[i];
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) {
    partial[gridDim.x] = sum;
    *done = 0;  // ready for the next launch
  }
}

// The clean read (stream_read, the size curve's read line): every thread issues its LOADS 16-byte
// loads at once (predicated, past L1), adds them in registers, and each block stores one partial
// sum: no loop, no second pass, no atomics, so the time is the bytes' and the launch's. The grid
// covers the array in one pass, BLOCK * LOADS vectors a block (on the H100 many short blocks that
// issue their loads and exit read 32 MiB faster than any persistent grid: docs/notes/gemv.md). The
// host adds the partial sums up for the check.
template <class T, int BLOCK, int LOADS>
__global__ void __launch_bounds__(BLOCK) bwprof_stream_read(const T* __restrict__ x, float* __restrict__ partial,
                                                            std::size_t n) {
  constexpr int V = Elems<T>::kVec;
  __shared__ float warp_sums[BLOCK / 32];
  const std::size_t nvec = n / V;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * BLOCK * LOADS + threadIdx.x;
  uint4 v[LOADS];
#pragma unroll
  for (int u = 0; u < LOADS; ++u) {
    v[u] = make_uint4(0, 0, 0, 0);  // zero bits are 0.0 in FP32, FP16 and BF16
    const std::size_t i = base + static_cast<std::size_t>(u) * BLOCK;
    load_stream_if(v[u], xv + (i < nvec ? i : 0), i < nvec);
  }
  float acc = 0.f;
#pragma unroll
  for (int u = 0; u < LOADS; ++u) {
    float f[V];
    unpack<T>(v[u], f);
#pragma unroll
    for (int e = 0; e < V; ++e) acc += f[e];
  }
  // The tail that does not fill a 16-byte vector (fewer than V elements: block 0's first threads).
  const std::size_t t = nvec * V + static_cast<std::size_t>(blockIdx.x) * BLOCK + threadIdx.x;
  if (t < n) acc += to_f(x[t]);
  acc = warp_sum(acc);
  if (threadIdx.x % warpSize == 0) warp_sums[threadIdx.x / warpSize] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < BLOCK / warpSize; ++w) s += warp_sums[w];
    partial[blockIdx.x] = s;
  }
}

// The read's shape: 256 threads a block, 2 16-byte loads a thread (8 KB a block, as the FP16 GEMV's
// rows of 4096; the shapes measured against it are in docs/notes/gemv.md).
constexpr int kReadBlock = 256, kReadLoads = 2;

class StreamGpu final : public KernelInstance {
 public:
  StreamGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_stream_data(p)) {
    const std::string op = stream_op(p);
    op_ = op == "copy" ? kCopy : op == "scale" ? kScale : op == "add" ? kAdd : op == "triad" ? kTriad
          : op == "read" ? kRead : kDot;
    a_ = DeviceBuffer::from(host_.a, "stream array a");
    if (op_ == kRead) {  // one array; one partial sum a block
      const std::size_t vecs = host_.a.size() / (16 / dtype_size(p.dtype));
      const std::size_t per_block = static_cast<std::size_t>(kReadBlock) * kReadLoads;
      const std::size_t blocks = std::max<std::size_t>((vecs + per_block - 1) / per_block, 1);
      if (blocks >= (1u << 31)) throw InvalidArgument("n: too large for one pass of the read");
      read_grid_ = static_cast<unsigned>(blocks);
      partial_ = DeviceBuffer(read_grid_ * sizeof(float), "read partial sums");
      return;
    }
    b_ = DeviceBuffer::from(host_.b, "stream array b");
    c_ = DeviceBuffer::from(host_.c, "stream array c");
    grid_ = grid_for((host_.a.size() + 7) / 8, kBlock, g.sm_count(), 8);  // the dot's grid-stride grid
    const std::size_t vecs = host_.a.size() / (16 / dtype_size(p.dtype));
    const std::size_t blocks = (vecs + kBlock * kPerThread - 1) / (kBlock * kPerThread);
    pass_grid_ = static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 1u << 30));
    partial_ = DeviceBuffer((grid_ + 1) * sizeof(float), "dot partial sums");
    done_ = DeviceBuffer(sizeof(unsigned), "dot block counter");
    done_.fill(0);
  }

  void launch() override {
    by_dtype(p_.dtype, [&](auto t) { run<typename decltype(t)::type>(); });
  }

  Check check() override {
    g_.synchronize();
    switch (op_) {
      case kCopy: c_.to(host_.c); break;
      case kScale: b_.to(host_.b); break;
      case kAdd: c_.to(host_.c); break;
      case kTriad: a_.to(host_.a); break;
      case kRead: {  // the blocks' partial sums, added in double
        std::vector<float> parts(read_grid_);
        BWPROF_GPU_CHECK(hipMemcpy(parts.data(), partial_.get(), parts.size() * sizeof(float), hipMemcpyDeviceToHost));
        double s = 0;
        for (float x : parts) s += x;
        host_.sum = s;
        break;
      }
      default: {
        float r = 0;  // the final sum sits after the per-block partials
        BWPROF_GPU_CHECK(hipMemcpy(&r, partial_.get<float>() + grid_, sizeof(float), hipMemcpyDeviceToHost));
        host_.dot = r;
      }
    }
    return stream_check(host_, p_);
  }

  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      if (op_ == kRead) return kernel_resources(bwprof_stream_read<T, kReadBlock, kReadLoads>, kReadBlock);
      return op_ == kDot ? kernel_resources(bwprof_stream_dot<T>, kBlock) : kernel_resources(bwprof_stream<T, kTriad>, kBlock);
    });
  }

 private:
  template <class T>
  void run() {
    const std::size_t n = host_.a.size();
    T* a = a_.get<T>();
    T* b = b_.get<T>();
    T* c = c_.get<T>();
    const float s = host_.scalar;
    hipStream_t st = g_.stream();
    switch (op_) {
      case kRead:
        bwprof_stream_read<T, kReadBlock, kReadLoads><<<read_grid_, kReadBlock, 0, st>>>(a, partial_.get<float>(), n);
        break;
      case kCopy: bwprof_stream<T, kCopy><<<pass_grid_, kBlock, 0, st>>>(a, nullptr, c, s, n); break;
      case kScale: bwprof_stream<T, kScale><<<pass_grid_, kBlock, 0, st>>>(c, nullptr, b, s, n); break;
      case kAdd: bwprof_stream<T, kAdd><<<pass_grid_, kBlock, 0, st>>>(a, b, c, s, n); break;
      case kTriad: bwprof_stream<T, kTriad><<<pass_grid_, kBlock, 0, st>>>(b, c, a, s, n); break;
      default:
        bwprof_stream_dot<T><<<grid_, kBlock, 0, st>>>(a, b, partial_.get<float>(), done_.get<unsigned>(), n);
    }
    BWPROF_CHECK_LAUNCH(p_.kernel.c_str());
  }

  GpuBackend& g_;
  Problem p_;
  StreamData host_;
  Op op_;
  DeviceBuffer a_, b_, c_, partial_, done_;
  unsigned grid_ = 1, pass_grid_ = 1, read_grid_ = 1;
};

}  // namespace

std::unique_ptr<KernelInstance> make_stream_gpu(Backend& b, const Problem& p) {
  return std::make_unique<StreamGpu>(as_gpu(b), p);
}

}  // namespace bwprof
