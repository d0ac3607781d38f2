#include "bwprof/dtype.hpp"

#include "bwprof/error.hpp"

namespace bwprof {

const char* to_string(DType t) { return t == DType::kF32 ? "fp32" : "fp16"; }

DType parse_dtype(const std::string& name) {
  if (name == "fp32" || name == "float32") return DType::kF32;
  if (name == "fp16" || name == "float16") return DType::kF16;
  BWPROF_INVALID("dtype: unknown dtype '" + name + "' (known: fp32, fp16)");
}

}  // namespace bwprof
