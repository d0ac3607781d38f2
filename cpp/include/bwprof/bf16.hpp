// bfloat16 storage for the CPU backend: the top 16 bits of an IEEE binary32 (8 exponent bits, 8
// significand bits counting the implicit one, so the unit roundoff is 2^-8). A distinct type (not a
// plain uint16_t like half_bits) so the typed CPU loops overload on it; the GPU side uses the vendor
// bfloat16 type with the same bits.
#pragma once
#include <cstdint>
#include <cstring>

namespace bwprof {

enum class bf16_bits : std::uint16_t {};

// Exact: every bfloat16 is a float.
inline float bf16_to_float(bf16_bits h) {
  const std::uint32_t x = static_cast<std::uint32_t>(static_cast<std::uint16_t>(h)) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Round to nearest even. Overflow carries into the exponent and gives infinity by itself;
// subnormals round like normals (bfloat16 has float's exponent range); a NaN stays a quiet NaN.
inline bf16_bits float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return bf16_bits(static_cast<std::uint16_t>((x >> 16) | 0x0040u));
  x += 0x7fffu + ((x >> 16) & 1u);
  return bf16_bits(static_cast<std::uint16_t>(x >> 16));
}

}  // namespace bwprof
