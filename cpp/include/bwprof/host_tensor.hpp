// A flat host array of one dtype: the inputs every backend starts from and the outputs the
// reference checks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "bwprof/dtype.hpp"
#include "bwprof/bf16.hpp"
#include "bwprof/half.hpp"

namespace bwprof {

// Throws OutOfMemory (naming `what`) when `bytes` more would not fit in available host memory:
// every allocation's own check, behind the whole problem's (check_memory, bwprof/limits.hpp).
void ensure_host_memory(double bytes, const char* what);

class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, std::size_t count, const char* what = "tensor");

  DType dtype() const { return dtype_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * dtype_size(dtype_); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <class T> T* as() { return static_cast<T*>(data()); }
  template <class T> const T* as() const { return static_cast<const T*>(data()); }

  float get(std::size_t i) const {
    switch (dtype_) {
      case DType::kF32: return as<float>()[i];
      case DType::kF16: return half_to_float(as<half_bits>()[i]);
      default: return bf16_to_float(as<bf16_bits>()[i]);
    }
  }
  void set(std::size_t i, float v) {
    switch (dtype_) {
      case DType::kF32: as<float>()[i] = v; break;
      case DType::kF16: as<half_bits>()[i] = float_to_half(v); break;
      default: as<bf16_bits>()[i] = float_to_bf16(v);
    }
  }
  // Uniform values in [lo, hi), deterministic for a seed, filled in parallel.
  void fill_random(std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);
  void fill(float v);

 private:
  struct Free {
    Free() noexcept : bytes(0) {}
    explicit Free(std::size_t b) noexcept : bytes(b) {}
    std::size_t bytes;
    void operator()(void* p) const;
  };
  DType dtype_ = DType::kF32;
  std::size_t count_ = 0;
  std::unique_ptr<void, Free> data_;
};

// Raw bytes (for packed formats such as Q4_0 blocks).
class HostBytes {
 public:
  HostBytes() = default;
  explicit HostBytes(std::size_t n, const char* what = "buffer");
  std::size_t size() const { return n_; }
  std::uint8_t* data() { return data_.get(); }
  const std::uint8_t* data() const { return data_.get(); }

 private:
  struct Free {
    Free() noexcept : bytes(0) {}
    explicit Free(std::size_t b) noexcept : bytes(b) {}
    std::size_t bytes;
    void operator()(std::uint8_t* p) const;
  };
  std::size_t n_ = 0;
  std::unique_ptr<std::uint8_t, Free> data_;
};

}  // namespace bwprof
