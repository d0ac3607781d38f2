// Element types a kernel can store its data in. Arithmetic accumulates in FP32 (or wider).
#pragma once
#include <cstddef>
#include <string>

namespace bwprof {

// kBF16: bfloat16 (8 exponent bits like FP32, 8 significand bits: unit roundoff 2^-8).
enum class DType { kF32, kF16, kBF16 };

const char* to_string(DType t);
DType parse_dtype(const std::string& name);  // "fp32" | "fp16" | "bf16"; InvalidArgument otherwise
inline std::size_t dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }

}  // namespace bwprof
