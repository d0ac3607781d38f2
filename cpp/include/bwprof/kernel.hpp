// Kernel families: their parameters, their minimal traffic, and the implementations (variants)
// each backend offers. The registry is the one list of everything bwprof can run.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
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

// A parameter's value, parsed once by make_problem(): an integer, a bool or a choice's text.
class ParamValue {
 public:
  ParamValue(int v) : v_(static_cast<std::int64_t>(v)) {}
  ParamValue(long v) : v_(static_cast<std::int64_t>(v)) {}
  ParamValue(long long v) : v_(static_cast<std::int64_t>(v)) {}
  ParamValue(bool v) : v_(v) {}
  ParamValue(const char* v) : v_(std::string(v)) {}
  ParamValue(std::string v) : v_(std::move(v)) {}

  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_text() const { return std::holds_alternative<std::string>(v_); }
  // The value as its kind; Error (an internal mistake, not the user's) for another kind.
  std::int64_t as_int() const;
  bool as_bool() const;
  const std::string& as_text() const;
  // As the shape and the record print it: "896", "1" / "0", "gelu".
  std::string text() const;
  bool operator==(const ParamValue& o) const { return v_ == o.v_; }
  bool operator!=(const ParamValue& o) const { return !(v_ == o.v_); }

 private:
  std::variant<std::int64_t, bool, std::string> v_;
};

using ParamList = std::vector<std::pair<std::string, ParamValue>>;

// One validated invocation: kernel, variant, dtype and parameter values.
class Problem {
 public:
  std::string kernel, variant;
  DType dtype = DType::kF32;
  ParamList params;  // spec order, typed (parsed once)

  // The value of one parameter (looked up by name); Error if the kernel has no such parameter
  // or it is of another kind.
  std::int64_t i(const std::string& name) const;
  bool b(const std::string& name) const;
  const std::string& s(const std::string& name) const;
  std::string shape() const;  // "M=128,N=896,K=896"
  std::vector<std::pair<std::string, std::string>> params_text() const;  // the shape's pairs
  // Replaces a value (for resolve()); Error for an unknown name or a value of another kind.
  void set(const std::string& name, ParamValue value);

 private:
  const ParamValue& get(const std::string& name) const;
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
