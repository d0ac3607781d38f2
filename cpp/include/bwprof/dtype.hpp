// Element types a kernel can store its data in. Arithmetic accumulates in FP32 (or wider).
#pragma once
#include <cstddef>
#include <string>

namespace bwprof {

enum class DType { kF32, kF16 };

const char* to_string(DType t);
DType parse_dtype(const std::string& name);  // "fp32" | "fp16"; InvalidArgument otherwise
inline std::size_t dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }

}  // namespace bwprof
