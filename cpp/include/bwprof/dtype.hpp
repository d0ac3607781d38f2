// Element types a kernel can store its data in. Arithmetic accumulates in FP32 (or wider).
#pragma once
#include <cstddef>
#include <string>

namespace bwprof {

// BF16 is a storage type of the collectives (NCCL/RCCL move it); no kernel family computes in it yet.
enum class DType { kF32, kF16, kBF16 };

const char* to_string(DType t);
DType parse_dtype(const std::string& name);  // "fp32" | "fp16" | "bf16"; InvalidArgument otherwise
inline std::size_t dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }

}  // namespace bwprof
