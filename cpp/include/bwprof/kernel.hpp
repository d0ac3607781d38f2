// Kernel descriptors: each kernel's parameters, its minimal traffic, the implementations (variants)
// each backend offers with their flags, and its suite configurations. A family folder
// (kernels/<family>/family.cpp) fills them and adds them to the registry (bwprof/registry.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bwprof/device.hpp"
#include "bwprof/dtype.hpp"
#include "bwprof/link.hpp"
#include "bwprof/measurement.hpp"

namespace bwprof {

class Backend;

struct ParamSpec {
  enum class Kind { kInt, kBool, kChoice };
  std::string name;
  Kind kind = Kind::kInt;
  std::string default_value;  // empty: the parameter is required
  std::vector<std::string> choices;
  std::int64_t min = 1;       // the integers allowed: [min, max], checked by make_problem()
  std::int64_t max = 1;
  std::string help;
  // false: left out of the shape (and the measurement's params) while at its default, so that a setting
  // added to a family after rows were recorded keeps their shapes (and the baselines that match them).
  bool in_shape_at_default = true;
  // An integer that also takes "auto" (the kernel's own choice; Problem::opt_i gives nothing then).
  bool allows_auto = false;
  // The variants the parameter applies to (empty: every one): a value other than its default with
  // another variant is an InvalidArgument naming them, never a setting silently ignored.
  std::vector<std::string> variants;
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
  std::vector<std::string> unshown;  // parameters at a default the shape leaves out (ParamSpec::in_shape_at_default)

  // The value of one parameter (looked up by name); Error if the kernel has no such parameter
  // or it is of another kind.
  std::int64_t i(const std::string& name) const;
  // An integer parameter that takes "auto" (ParamSpec::allows_auto): nothing when it is "auto".
  std::optional<std::int64_t> opt_i(const std::string& name) const;
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

// What one instance of a problem holds at once: every host buffer (inputs, outputs, the copies the
// reference check reads) and every device buffer (the same on a GPU, plus its workspaces).
struct Footprint {
  double host_bytes = 0, device_bytes = 0;
};

// Upper bounds for integer parameters: one dimension of a tensor, and the elements of a flat
// array. A value beyond them is a mistake, not a wish (whether a shape fits in memory is checked
// apart, from the family's footprint; see bwprof/limits.hpp).
constexpr std::int64_t kMaxDim = std::int64_t(1) << 24;       // 16,777,216
constexpr std::int64_t kMaxElements = std::int64_t(1) << 36;  // 68,719,476,736 (256 GiB of FP32)

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
  // False for work that cannot name what it touches (user code declaring no buffers): the CPU
  // backend then evicts by streaming a buffer larger than its caches.
  virtual bool names_its_buffers() const { return true; }
  virtual Resources resources() const { return {}; }
  // What the instance runs where its variant chooses among kernels (kernel, tile, K split), in a
  // line for people (bwprof.explain); empty where there is no choice to tell.
  virtual std::string explain() const { return ""; }
  // The link the work crosses (a host copy: the GPU's PCIe or chip-to-chip link; a peer copy: the
  // link between the two GPUs), which then judges the row instead of device memory. Empty (the
  // default): the work stays in device memory.
  virtual Link link() const { return {}; }
  // Called before each timed launch, after the cache flush and outside the timing (a collective
  // across processes lines its ranks up here).
  virtual void before_timing() {}
};

using Factory = std::function<std::unique_ptr<KernelInstance>(Backend&, const Problem&)>;

// Which roof a variant measures for the peaks policy (bwprof/peaks.hpp): the best of the memory
// variants of a backend is its achievable bandwidth, the vector variants its compute per dtype,
// the matrix variants the matrix units' per arithmetic type (fp16, bf16, tf32, fp8, int8), and
// the cache variants the bandwidth of one level of the hierarchy (L2, L1, shared memory / LDS).
enum class Ceiling { kNone, kMemory, kVector, kMatrix, kL2, kL1, kShared };
// "none", "memory", "vector", "matrix", "l2", "l1", "shared"
const char* to_string(Ceiling c);

// One run of a ceiling variant that the peaks policy makes on a device: what it measures (an
// arithmetic type such as "bf16", or an access such as "read" / "rw"), the storage dtype and the
// parameters. A family that lists none for a device has no such roof there (absent, not zero).
struct CeilingRun {
  std::string what;
  std::string dtype = "fp32";
  std::map<std::string, std::string> params;
};

struct Variant {
  Variant(std::string name_, std::string backend_, Factory make_)
      : name(std::move(name_)), backend(std::move(backend_)), make(std::move(make_)) {}
  std::string name;
  std::string backend;  // "cpu" or "gpu"
  Factory make;
  std::vector<DType> dtypes;  // empty: every dtype of the family
  // Its work in matrix_dtypes (FP16, BF16) runs on the matrix units (tensor cores, MFMA), so its
  // compute roof is theirs.
  bool matrix_units = false;
  std::vector<DType> matrix_dtypes;
  Ceiling ceiling = Ceiling::kNone;

  // Flags, so that a descriptor declares each variant in one expression:
  // Variant{"tensor", "gpu", make_gemm_gpu}.only({DType::kF16, DType::kBF16}).on_matrix_units()
  Variant& only(std::vector<DType> d) { dtypes = std::move(d); return *this; }
  Variant& on_matrix_units(std::vector<DType> d = {DType::kF16, DType::kBF16}) {
    matrix_units = true;
    matrix_dtypes = std::move(d);
    return *this;
  }
  Variant& measures(Ceiling c) { ceiling = c; return *this; }
};

// One configuration of the default suite (bwprof bench): its label, its parameters, the smaller
// ones --quick takes, the variants to compare where the backend has them (empty: the backend's
// default) and the dtypes.
// The label names the shape that runs, so a number in it comes from the parameters: `{name}` is
// replaced by the parameter's value and `{name:bin}` by a count with a binary prefix ("16Mi" for
// 16777216). Registry::add_family() writes `label` from the full parameters and `quick_label`
// from the --quick ones (a parameter a configuration leaves out takes its default).
struct SuiteConfig {
  SuiteConfig(std::string label_, ParamList params_, ParamList quick_, std::vector<std::string> variants_ = {},
              std::vector<DType> dtypes_ = {DType::kF32, DType::kF16})
      : label(std::move(label_)), params(std::move(params_)), quick(std::move(quick_)),
        variants(std::move(variants_)), dtypes(std::move(dtypes_)) {}
  std::string label, quick_label;
  ParamList params, quick;
  std::vector<std::string> variants;
  std::vector<DType> dtypes;
};

struct KernelFamily {
  std::string name;    // "gemm", "stream_triad", ...
  std::string family;  // the results' family column: "gemm", "stream", ...
  std::string doc;
  std::vector<ParamSpec> params;
  std::vector<DType> dtypes;
  AccessPattern pattern = AccessPattern::kCoalesced;
  std::function<void(Problem&)> resolve;         // fills derived defaults (0 = "same as"); may be empty
  std::function<void(const Problem&)> validate;  // cross-parameter rules; may be empty
  std::function<Traffic(const Problem&)> traffic;
  // The arithmetic its FLOPs are done in for a problem ("fp64 vector", "fp16 vector" for packed
  // HFMA2; bwprof/roofline.hpp), whose roof judges its rows. Empty (or no function): the default,
  // default_arithmetic() of the dtype (its matrix arithmetic where the variant runs it on the
  // matrix units, else FP32 on the vector units).
  std::function<std::string(const Problem&)> arithmetic;
  // Host and device bytes an instance holds on a backend kind ("cpu" or "gpu"), computed from
  // the parameters before anything is allocated; the core refuses a problem that does not fit.
  std::function<Footprint(const Problem&, const std::string& backend_kind)> footprint;
  std::vector<Variant> variants;
  // Where the kernel sits in the registry (kernels(), the CLI's list): ascending, a family
  // folder's kernels in the order it adds them.
  int order = 1000;
  // Where its suite configurations sit in the default suite; -1: at `order`.
  int suite_order = -1;
  std::vector<SuiteConfig> suite;
  // Whether `bench` without --kernels runs its suite configurations. Families that need more than
  // one GPU or a collective library (peer copies, collectives) run only when asked by name.
  bool default_suite = true;
  // Ceiling variants only: the parameters of the peaks run on a device, and the integer parameter
  // that a run timed by a host clock (the CPU) multiplies until one launch is long enough to time.
  std::function<std::map<std::string, std::string>(const DeviceInfo&)> ceiling_params;
  std::string ceiling_grow;
  // Memory ceilings only: the integer parameter the bytes moved are proportional to, for the
  // size-aware ceiling (bwprof/size_curve.hpp); empty: the kernel is not on that curve. A kernel
  // on the curve defines the line of its access pattern (its share of bytes written): it should
  // be the cleanest kernel of that pattern (no second pass, no grid-wide atomics).
  std::string ceiling_size;
  // Ceiling variants that measure several figures (matrix types, cache accesses, FP64 chains):
  // the runs to make on a device, beyond a vector ceiling's one run per dtype (ceiling_params).
  std::function<std::vector<CeilingRun>(const DeviceInfo&)> ceiling_runs;
  // Cache-level ceilings: the bytes a run's working set spans (the figure the peaks report).
  std::function<double(const Problem&)> ceiling_working_set;
};

// Validates dtype, variant (empty: the backend's first) and parameters (unknown, missing,
// non-numeric, outside the spec's [min, max], or overflowing sizes: InvalidArgument naming the
// argument, the kernel, the value and the range).
Problem make_problem(const KernelFamily& k, const std::string& backend_kind,
                     const std::string& variant, const std::string& dtype,
                     const std::map<std::string, std::string>& params);
const Variant& find_variant(const KernelFamily& k, const std::string& backend_kind,
                            const std::string& variant);

// Checked size arithmetic: throws InvalidArgument("shape too large: <what>") on overflow.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);

// ---- helpers for descriptors ----------------------------------------------------------------
// A parameter: an integer in [min, max] (`def` empty: required), a bool, or one of `choices`.
ParamSpec int_param(const char* name, const char* def, std::int64_t min, std::int64_t max, const char* help);
ParamSpec bool_param(const char* name, const char* def, const char* help);
ParamSpec choice_param(const char* name, const char* def, std::vector<std::string> choices, const char* help);
// A kernel choice that the dispatch rules make unless it is set: "auto" (the default, left out of
// the shape so that rows recorded before it existed keep their shapes) or one of `choices`, or an
// integer in [min, max]; for the `variants` named only.
ParamSpec auto_choice_param(const char* name, std::vector<std::string> choices, std::vector<std::string> variants,
                            const char* help);
ParamSpec auto_int_param(const char* name, std::int64_t min, std::int64_t max, std::vector<std::string> variants,
                         const char* help);
// The product of the named parameters, checked for overflow (also as the bytes of an FP32 tensor
// of that many elements): InvalidArgument "shape too large: M*K overflows".
std::int64_t checked_elements(const Problem& p, std::initializer_list<const char*> names);
// The footprint of an instance whose GPU variant keeps its host data and a device copy of it (as
// every family's does): `bytes` on the host, and on a GPU the same plus `device_extra`
// (workspaces, re-packed copies).
inline Footprint host_and_device(double bytes, const std::string& backend_kind, double device_extra = 0) {
  return Footprint{bytes, backend_kind == "cpu" ? 0.0 : bytes + device_extra};
}
// Bytes of one element of the problem's dtype, as a double for traffic formulas.
inline double elem_bytes(const Problem& p) { return static_cast<double>(dtype_size(p.dtype)); }

}  // namespace bwprof
