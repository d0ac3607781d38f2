// The ONE place that maps the HIP API onto CUDA. Kernels and the GPU backend are written against
// HIP names; under nvcc each name below becomes its CUDA twin. Nothing else in the tree names a
// vendor's API.
#pragma once

#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#define BWPROF_HIP 1
#define BWPROF_SHFL_XOR(v, m) __shfl_xor((v), (m))
// From the lane d above within each group of 32 lanes (wave64 runs two groups side by side).
#define BWPROF_SHFL_DOWN32(v, d) __shfl_down((v), (d), 32)
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define BWPROF_CUDA 1
#define BWPROF_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))
#define BWPROF_SHFL_DOWN32(v, d) __shfl_down_sync(0xffffffffu, (v), (d), 32)

using hipError_t = cudaError_t;
using hipEvent_t = cudaEvent_t;
using hipStream_t = cudaStream_t;
using hipDeviceProp_t = cudaDeviceProp;
using hipFuncAttributes = cudaFuncAttributes;
using hipDeviceAttribute_t = cudaDeviceAttr;
using hipGraph_t = cudaGraph_t;
using hipGraphExec_t = cudaGraphExec_t;
#define hipSuccess cudaSuccess
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorInsufficientDriver cudaErrorInsufficientDriver
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipDeviceAttributeMemoryClockRate cudaDevAttrMemoryClockRate
#define hipDeviceAttributeMemoryBusWidth cudaDevAttrGlobalMemoryBusWidth
#define hipDeviceAttributeClockRate cudaDevAttrClockRate
#define hipDeviceAttributeL2CacheSize cudaDevAttrL2CacheSize
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeSharedMemPerBlockOptin cudaDevAttrMaxSharedMemoryPerBlockOptin
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemsetAsync cudaMemsetAsync
#define hipMemset cudaMemset
#define hipMemGetInfo cudaMemGetInfo
#define hipHostMalloc cudaHostAlloc
#define hipHostMallocMapped cudaHostAllocMapped
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipHostFree cudaFreeHost
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipFuncGetAttributes cudaFuncGetAttributes
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
// Launches with attributes (thread block clusters: CUDA 12+, sm_90+).
using hipLaunchConfig_t = cudaLaunchConfig_t;
using hipLaunchAttribute = cudaLaunchAttribute;
#define hipLaunchAttributeClusterDimension cudaLaunchAttributeClusterDimension
#define hipLaunchKernelEx cudaLaunchKernelEx
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
// Host memory, peers and streams of several devices (transfers, peer copies, collectives).
#define hipHostMallocDefault cudaHostAllocDefault
#define hipMemcpyHostToHost cudaMemcpyHostToHost
#define hipErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define hipGetDevice cudaGetDevice
#define hipDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define hipDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define hipMemcpyPeerAsync cudaMemcpyPeerAsync
#define hipDeviceGetP2PAttribute cudaDeviceGetP2PAttribute
#define hipDevP2PAttrAccessSupported cudaDevP2PAttrAccessSupported
#define hipDevP2PAttrPerformanceRank cudaDevP2PAttrPerformanceRank
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDisableTiming cudaEventDisableTiming
#endif

#include <string>

namespace bwprof {
// The vendor's bfloat16 storage type (the same 16 bits as the host's bf16_bits).
#if defined(BWPROF_HIP)
using gpu_bf16 = hip_bfloat16;
#else
using gpu_bf16 = __nv_bfloat16;
#endif
// Throws OutOfMemory for an allocation failure and Error otherwise, naming the call and place.
[[noreturn]] void gpu_fail(hipError_t err, const char* call, const char* file, int line);
}  // namespace bwprof

// The one error-check macro for GPU calls.
#define BWPROF_GPU_CHECK(expr)                                                   \
  do {                                                                           \
    hipError_t bwprof_err_ = (expr);                                             \
    if (bwprof_err_ != hipSuccess) ::bwprof::gpu_fail(bwprof_err_, #expr, __FILE__, __LINE__); \
  } while (0)
