#include "bwprof/host_tensor.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bwprof/error.hpp"
#include "bwprof/limits.hpp"
#include "bwprof/parallel.hpp"

namespace bwprof {

namespace {

void* aligned_alloc_checked(std::size_t bytes, const char* what) {
  ensure_host_memory(static_cast<double>(bytes), what);
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0 || !p) {
    throw OutOfMemory(std::string("out of host memory allocating ") + what + " (" +
                      std::to_string(bytes) + " bytes)");
  }
  host_memory_counter().add(bytes);
  return p;
}

std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

void ensure_host_memory(double bytes, const char* what) {
  // Keep a margin so the process itself and the page cache survive.
  double avail = available_host_bytes();
  if (bytes > 0.9 * avail) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "out of host memory: %s needs %.3g GB, %.3g GB available",
                  what, bytes / 1e9, avail / 1e9);
    throw OutOfMemory(buf);
  }
}

void HostTensor::Free::operator()(void* p) const {
  std::free(p);
  host_memory_counter().remove(bytes);
}
void HostBytes::Free::operator()(std::uint8_t* p) const {
  std::free(p);
  host_memory_counter().remove(bytes);
}

HostTensor::HostTensor(DType dtype, std::size_t count, const char* what)
    : dtype_(dtype), count_(count),
      data_(aligned_alloc_checked(count * dtype_size(dtype), what), Free{count * dtype_size(dtype)}) {}

HostBytes::HostBytes(std::size_t n, const char* what)
    : n_(n), data_(static_cast<std::uint8_t*>(aligned_alloc_checked(n, what)), Free{n}) {}

void HostTensor::fill_random(std::uint64_t seed, float lo, float hi) {
  const float scale = (hi - lo) / 16777216.0f;
  parallel_for(count_, 1 << 16, [&](std::size_t b, std::size_t e) {
    std::uint64_t state = seed * 0x2545f4914f6cdd1dull + b;
    for (std::size_t i = b; i < e; ++i) {
      float v = lo + scale * static_cast<float>(splitmix(state) >> 40);
      set(i, v);
    }
  });
}

void HostTensor::fill(float v) {
  parallel_for(count_, 1 << 16, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) set(i, v);
  });
}

}  // namespace bwprof
