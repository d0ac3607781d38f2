// Kernel families: their parameters, their minimal traffic, and the implementations (variants)
// each backend offers. The registry is the one list of everything bwprof can run.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bwprof/dtype.hpp"
#include "bwprof/measurement.hpp"

namespace bwprof {

class Backend;

struct ParamSpec {
  enum class Kind { kInt, kBool, kChoice };
  std::string name;
  Kind kind = Kind::kInt;
  std::string default_value;  // empty: the parameter is required
  std::vector<std::string> choices;
  std::int64_t min = 1;       // smallest allowed integer
  std::string help;
};

// One validated invocation: kernel, variant, dtype and parameter values.
class Problem {
 public:
  std::string kernel, variant;
  DType dtype = DType::kF32;
  std::vector<std::pair<std::string, std::string>> params;  // spec order, normalized text

  std::int64_t i(const std::string& name) const;
  bool b(const std::string& name) const;
  const std::string& s(const std::string& name) const;
  std::string shape() const;  // "M=128,N=896,K=896"
  void set(const std::string& name, const std::string& value);

 private:
  const std::string& raw(const std::string& name) const;
};

struct Traffic {
  double bytes_read = 0, bytes_written = 0, flops = 0;
};

struct Check {
  double max_rel_error = 0;  // max |out - gold| / max |gold| over the checked outputs
  double tolerance = 0;
  bool ok = false;
};

struct Resources {
  int block_size = -1, registers_per_thread = -1, shared_mem_per_block = -1;
  int runtime_blocks_per_sm = -1;  // the GPU runtime's own occupancy answer for this kernel
};

// Buffers prepared for one problem on one backend, ready to launch many times.
class KernelInstance {
 public:
  virtual ~KernelInstance() = default;
  virtual void launch() = 0;  // one run; asynchronous on a GPU
  virtual Check check() = 0;  // compares the last run's output with the float64 reference
  // Host memory the kernel touches, so the CPU backend can evict it for a cold run.
  virtual std::vector<std::pair<const void*, std::size_t>> host_buffers() const { return {}; }
  virtual Resources resources() const { return {}; }
};

using Factory = std::function<std::unique_ptr<KernelInstance>(Backend&, const Problem&)>;

struct Variant {
  std::string name;
  std::string backend;  // "cpu" or "gpu"
  Factory make;
  std::vector<DType> dtypes;  // empty: every dtype of the family
  // FP16 work runs on the matrix units (tensor cores, MFMA), so its compute roof is theirs.
  bool matrix_units = false;
};

struct KernelFamily {
  std::string name;    // "gemm", "stream_triad", ...
  std::string family;  // "gemm", "stream", ...
  std::string doc;
  std::vector<ParamSpec> params;
  std::vector<DType> dtypes;
  AccessPattern pattern = AccessPattern::kCoalesced;
  std::function<void(Problem&)> resolve;         // fills derived defaults (0 = "same as"); may be empty
  std::function<void(const Problem&)> validate;  // cross-parameter rules; may be empty
  std::function<Traffic(const Problem&)> traffic;
  std::vector<Variant> variants;
};

// The registry (built once). find_kernel throws InvalidArgument listing the known names.
const std::vector<KernelFamily>& kernel_registry();
const KernelFamily& find_kernel(const std::string& name);

// Validates dtype, variant (empty: the backend's first) and parameters (unknown, missing,
// non-numeric, below the minimum, or overflowing sizes: InvalidArgument naming the argument).
Problem make_problem(const KernelFamily& k, const std::string& backend_kind,
                     const std::string& variant, const std::string& dtype,
                     const std::map<std::string, std::string>& params);
const Variant& find_variant(const KernelFamily& k, const std::string& backend_kind,
                            const std::string& variant);

// Checked size arithmetic: throws InvalidArgument("shape too large: <what>") on overflow.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);

}  // namespace bwprof
