#include "bwprof/dtype.hpp"

#include "bwprof/error.hpp"

namespace bwprof {

const char* to_string(DType t) {
  switch (t) {
    case DType::kF32: return "fp32";
    case DType::kF16: return "fp16";
    case DType::kBF16: return "bf16";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  if (name == "fp32" || name == "float32") return DType::kF32;
  if (name == "fp16" || name == "float16") return DType::kF16;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  BWPROF_INVALID("dtype: unknown dtype '" + name + "' (known: fp32, fp16, bf16)");
}

}  // namespace bwprof
