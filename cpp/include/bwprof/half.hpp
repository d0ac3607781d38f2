// IEEE binary16 storage for the CPU backend. Conversions are branch-light so loops over
// half arrays still vectorize; the GPU side uses the vendor half type with the same bits.
#pragma once
#include <cstdint>
#include <cstring>

namespace bwprof {

using half_bits = std::uint16_t;

inline float half_to_float(half_bits h) {
  // Shift exponent+mantissa into float position and rescale by 2^112: this is exact for normal
  // and subnormal halves; infinities and NaNs get the float's all-ones exponent.
  std::uint32_t em = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  float f;
  std::memcpy(&f, &em, 4);
  f *= 5.192296858534828e+33f;  // 2^112
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= (em >= (0x7c00u << 13)) ? 0x7f800000u : 0u;
  bits |= sign;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline half_bits float_to_half(float f) {
  // Round to nearest even, with overflow to infinity, subnormals and NaN kept NaN.
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<half_bits>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) return static_cast<half_bits>(sign | 0x7c00u);  // rounds above 65504
  if (ax < 0x38800000u) {  // result is subnormal or zero: let float addition do the rounding
    float a;
    std::memcpy(&a, &ax, 4);
    a += 0.5f;  // 2^-1 puts the half-subnormal ulp (2^-24) at the float's last mantissa bit
    std::uint32_t b;
    std::memcpy(&b, &a, 4);
    return static_cast<half_bits>(sign | (b - 0x3f000000u));
  }
  std::uint32_t mant_odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<half_bits>(sign | (ax >> 13));
}

}  // namespace bwprof
