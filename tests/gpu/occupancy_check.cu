// Asks the CUDA runtime itself how many blocks fit per SM, for a sweep of block sizes, register
// counts and shared-memory sizes, so that bwprof's occupancy calculator can be compared with it
// (tests/python/test_occupancy_gpu.py compiles this, runs it and does the comparison).
//
// Build: nvcc -O2 -arch=native -o occupancy_check tests/gpu/occupancy_check.cu
// Output (stdout): '#' lines describing the device and each kernel, then one CSV line per case:
//   threads,regs,smem,blocks
// where regs is the kernel's real register count (cudaFuncGetAttributes), smem is static +
// dynamic shared memory per block in bytes, and blocks is
// cudaOccupancyMaxActiveBlocksPerMultiprocessor's answer (-1 when it returned an error).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(err_), \
                   __FILE__, __LINE__);                                                  \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

// N values stay live across the loop, so the register count grows with N; the launch bound
// (when given) makes the compiler cap registers instead. Nothing here is ever launched.
template <int N>
__device__ float chain(const float* in, int iters) {
  float v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = in[threadIdx.x * N + i];
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = fmaf(v[i], v[(i + 1) % N], 1.0f);
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N; ++i) s += v[i] * (i + 1);
  return s;
}

template <int N>
__global__ void regs_kernel(const float* in, float* out, int iters) {
  extern __shared__ float dyn[];
  float s = chain<N>(in, iters);
  dyn[threadIdx.x] = s;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
}

template <int N, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads) bounded_kernel(const float* in, float* out, int iters) {
  extern __shared__ float dyn[];
  float s = chain<N>(in, iters);
  dyn[threadIdx.x] = s;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
}

// 12000 B of static shared memory on top of the dynamic part.
template <int N>
__global__ void static_smem_kernel(const float* in, float* out, int iters) {
  __shared__ float fixed[3000];
  extern __shared__ float dyn[];
  float s = chain<N>(in, iters);
  fixed[threadIdx.x % 3000] = s;
  dyn[threadIdx.x] = s;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = fixed[(threadIdx.x + 7) % 3000] + dyn[(threadIdx.x + 1) % blockDim.x];
}

using Kernel = void (*)(const float*, float*, int);

struct Named {
  const char* name;
  Kernel fn;
};

int main() {
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, dev));
  std::printf("# device,%s\n", p.name);
  std::printf("# compute_capability,%d.%d\n", p.major, p.minor);
  std::printf("# sharedMemPerMultiprocessor,%zu\n", p.sharedMemPerMultiprocessor);
  std::printf("# sharedMemPerBlockOptin,%zu\n", p.sharedMemPerBlockOptin);
  std::printf("# reservedSharedMemPerBlock,%zu\n", p.reservedSharedMemPerBlock);
  std::printf("# regsPerMultiprocessor,%d\n", p.regsPerMultiprocessor);
  std::printf("# maxThreadsPerMultiProcessor,%d\n", p.maxThreadsPerMultiProcessor);
  std::printf("# maxBlocksPerMultiProcessor,%d\n", p.maxBlocksPerMultiProcessor);
  std::printf("threads,regs,smem,blocks\n");

  const std::vector<Named> kernels = {
      {"regs_kernel<1>", regs_kernel<1>},
      {"regs_kernel<4>", regs_kernel<4>},
      {"regs_kernel<12>", regs_kernel<12>},
      {"regs_kernel<20>", regs_kernel<20>},
      {"regs_kernel<28>", regs_kernel<28>},
      {"regs_kernel<36>", regs_kernel<36>},
      {"regs_kernel<48>", regs_kernel<48>},
      {"regs_kernel<64>", regs_kernel<64>},
      {"regs_kernel<80>", regs_kernel<80>},
      {"regs_kernel<100>", regs_kernel<100>},
      {"regs_kernel<128>", regs_kernel<128>},
      {"regs_kernel<160>", regs_kernel<160>},
      {"regs_kernel<200>", regs_kernel<200>},
      {"bounded_kernel<200,1024>", bounded_kernel<200, 1024>},
      {"bounded_kernel<200,512>", bounded_kernel<200, 512>},
      {"bounded_kernel<200,384>", bounded_kernel<200, 384>},
      {"bounded_kernel<200,256>", bounded_kernel<200, 256>},
      {"static_smem_kernel<16>", static_smem_kernel<16>},
      {"static_smem_kernel<64>", static_smem_kernel<64>},
  };
  // Dynamic shared memory per block, bytes; capped per kernel at the opt-in maximum.
  const std::vector<long> dynamic_sizes = {0,     1,     128,   1000,  1024,  4096,  8192,  12288, 16384,
                                           24000, 32768, 40000, 48128, 49152, 65536, 81920, 100000,
                                           101376, 132000, 163840, 166912, 200000, 232448};

  for (const Named& k : kernels) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, k.fn));
    const long max_dynamic = static_cast<long>(p.sharedMemPerBlockOptin) - static_cast<long>(a.sharedSizeBytes);
    // Allow dynamic shared memory up to the opt-in maximum, as a kernel that needs it does.
    CHECK(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(max_dynamic)));
    std::printf("# kernel,%s,numRegs=%d,sharedSizeBytes=%zu,maxThreadsPerBlock=%d\n", k.name, a.numRegs,
                a.sharedSizeBytes, a.maxThreadsPerBlock);
    for (int threads = 32; threads <= 1024; threads += 32) {
      for (long dyn : dynamic_sizes) {
        if (dyn > max_dynamic) continue;
        int blocks = -1;
        cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.fn, threads, static_cast<size_t>(dyn));
        if (err != cudaSuccess) {
          cudaGetLastError();  // clear it
          blocks = -1;
        }
        std::printf("%d,%d,%ld,%d\n", threads, a.numRegs, dyn + static_cast<long>(a.sharedSizeBytes), blocks);
      }
    }
  }
  return 0;
}
