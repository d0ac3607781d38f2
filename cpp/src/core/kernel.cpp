// Problems: parameters parsed once into typed values, validated against a kernel's descriptor.
#include "bwprof/kernel.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <utility>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool parse_bool(const std::string& v, bool& out) {
  std::string s = v;
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return out = true, true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return out = false, true;
  return false;
}

}  // namespace

const char* to_string(Ceiling c) {
  switch (c) {
    case Ceiling::kMemory: return "memory";
    case Ceiling::kVector: return "vector";
    case Ceiling::kMatrix: return "matrix";
    case Ceiling::kL2: return "l2";
    case Ceiling::kL1: return "l1";
    case Ceiling::kShared: return "shared";
    default: return "none";
  }
}

ParamSpec int_param(const char* name, const char* def, std::int64_t min, std::int64_t max, const char* help) {
  if (min > max) throw Error(std::string("internal: parameter '") + name + "' has an empty range");
  ParamSpec p;
  p.name = name;
  p.default_value = def;
  p.help = help;
  p.min = min;
  p.max = max;
  return p;
}

ParamSpec bool_param(const char* name, const char* def, const char* help) {
  ParamSpec p = int_param(name, def, 0, 1, help);
  p.kind = ParamSpec::Kind::kBool;
  return p;
}

ParamSpec choice_param(const char* name, const char* def, std::vector<std::string> choices, const char* help) {
  ParamSpec p = int_param(name, def, 0, 0, help);
  p.kind = ParamSpec::Kind::kChoice;
  p.choices = std::move(choices);
  return p;
}

ParamSpec auto_choice_param(const char* name, std::vector<std::string> choices, std::vector<std::string> variants,
                            const char* help) {
  choices.insert(choices.begin(), "auto");
  ParamSpec p = choice_param(name, "auto", std::move(choices), help);
  p.in_shape_at_default = false;
  p.variants = std::move(variants);
  return p;
}

ParamSpec auto_int_param(const char* name, std::int64_t min, std::int64_t max, std::vector<std::string> variants,
                         const char* help) {
  ParamSpec p = int_param(name, "auto", min, max, help);
  p.in_shape_at_default = false;
  p.allows_auto = true;
  p.variants = std::move(variants);
  return p;
}

std::int64_t checked_elements(const Problem& p, std::initializer_list<const char*> names) {
  std::int64_t n = 1;
  std::string what;
  for (const char* name : names) {
    what += (what.empty() ? "" : "*") + std::string(name);
    n = checked_mul(n, p.i(name), what.c_str());
  }
  checked_mul(n, 4, what.c_str());  // bytes of an FP32 tensor of that size
  return n;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) BWPROF_INVALID(std::string("shape too large: ") + what + " overflows");
  return r;
}

std::int64_t ParamValue::as_int() const {
  if (!is_int()) throw Error("internal: parameter value '" + text() + "' is not an integer");
  return std::get<std::int64_t>(v_);
}

bool ParamValue::as_bool() const {
  if (!is_bool()) throw Error("internal: parameter value '" + text() + "' is not a bool");
  return std::get<bool>(v_);
}

const std::string& ParamValue::as_text() const {
  if (!is_text()) throw Error("internal: parameter value '" + text() + "' is not a choice");
  return std::get<std::string>(v_);
}

std::string ParamValue::text() const {
  if (is_int()) return std::to_string(std::get<std::int64_t>(v_));
  if (is_bool()) return std::get<bool>(v_) ? "1" : "0";
  return std::get<std::string>(v_);
}

const ParamValue& Problem::get(const std::string& name) const {
  for (auto& kv : params)
    if (kv.first == name) return kv.second;
  throw Error("internal: kernel '" + kernel + "' has no parameter '" + name + "'");
}

void Problem::set(const std::string& name, ParamValue value) {
  for (auto& kv : params) {
    if (kv.first != name) continue;
    if (kv.second.is_int() != value.is_int() || kv.second.is_bool() != value.is_bool())
      throw Error("internal: parameter '" + name + "' of kernel '" + kernel + "' set to a value of another kind");
    kv.second = std::move(value);
    return;
  }
  throw Error("internal: kernel '" + kernel + "' has no parameter '" + name + "'");
}

std::int64_t Problem::i(const std::string& name) const { return get(name).as_int(); }
std::optional<std::int64_t> Problem::opt_i(const std::string& name) const {
  const ParamValue& v = get(name);
  if (v.is_text() && v.as_text() == "auto") return std::nullopt;
  return v.as_int();
}
bool Problem::b(const std::string& name) const { return get(name).as_bool(); }
const std::string& Problem::s(const std::string& name) const { return get(name).as_text(); }

std::string Problem::shape() const {
  std::string out;
  for (auto& kv : params_text()) out += (out.empty() ? "" : ",") + kv.first + "=" + kv.second;
  return out;
}

std::vector<std::pair<std::string, std::string>> Problem::params_text() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& kv : params)
    if (std::find(unshown.begin(), unshown.end(), kv.first) == unshown.end()) out.emplace_back(kv.first, kv.second.text());
  return out;
}

const Variant& find_variant(const KernelFamily& k, const std::string& backend_kind,
                            const std::string& variant) {
  std::vector<std::string> names;
  for (auto& v : k.variants) {
    if (v.backend != backend_kind) continue;
    if (variant.empty() || v.name == variant) return v;
    names.push_back(v.name);
  }
  if (names.empty()) {
    std::string others;
    for (auto& v : k.variants) others += (others.empty() ? "" : ", ") + v.name + " [" + v.backend + "]";
    if (others.empty())
      BWPROF_INVALID("device: kernel '" + k.name + "' has no implementation in this build (it needs the GPU backend: "
                     "build with nvcc or hipcc)");
    BWPROF_INVALID("device: kernel '" + k.name + "' has no implementation for the " + backend_kind +
                   " backend; it runs on: " + others);
  }
  BWPROF_INVALID("variant: kernel '" + k.name + "' has no variant '" + variant + "' on the " + backend_kind +
                 " backend (available: " + join(names) + ")");
}

Problem make_problem(const KernelFamily& k, const std::string& backend_kind, const std::string& variant,
                     const std::string& dtype, const std::map<std::string, std::string>& params) {
  Problem p;
  p.kernel = k.name;
  p.dtype = parse_dtype(dtype);
  if (std::find(k.dtypes.begin(), k.dtypes.end(), p.dtype) == k.dtypes.end()) {
    std::vector<std::string> ok;
    for (auto t : k.dtypes) ok.push_back(to_string(t));
    BWPROF_INVALID("dtype: kernel '" + k.name + "' does not support " + dtype + " (supported: " + join(ok) + ")");
  }
  const Variant& v = find_variant(k, backend_kind, variant);
  if (!v.dtypes.empty() && std::find(v.dtypes.begin(), v.dtypes.end(), p.dtype) == v.dtypes.end())
    BWPROF_INVALID("dtype: variant '" + v.name + "' of kernel '" + k.name + "' does not support " + dtype);
  p.variant = v.name;

  std::vector<std::string> known;
  for (auto& spec : k.params) known.push_back(spec.name);
  for (auto& kv : params) {
    if (std::find(known.begin(), known.end(), kv.first) == known.end())
      BWPROF_INVALID(kv.first + ": unknown parameter for kernel '" + k.name + "' (parameters: " + join(known) + ")");
  }
  for (auto& spec : k.params) {
    auto it = params.find(spec.name);
    const std::string value = it != params.end() ? it->second : spec.default_value;
    if (value.empty()) BWPROF_INVALID(spec.name + ": required parameter of kernel '" + k.name + "' is missing");
    switch (spec.kind) {
      case ParamSpec::Kind::kInt: {
        if (spec.allows_auto && value == "auto") {
          p.params.emplace_back(spec.name, ParamValue("auto"));
          break;
        }
        errno = 0;
        char* end = nullptr;
        long long x = std::strtoll(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0')
          BWPROF_INVALID(spec.name + ": expected an integer" + (spec.allows_auto ? " or 'auto'" : "") + ", got '" +
                         value + "'");
        // One check for every integer of every family, before anything is allocated or launched.
        if (errno == ERANGE || x < spec.min || x > spec.max)
          BWPROF_INVALID(spec.name + ": " + (value.size() > 40 ? value.substr(0, 37) + "..." : value) + " is out of range for kernel '" + k.name + "' (" + spec.name +
                         " must be between " + std::to_string(spec.min) + " and " + std::to_string(spec.max) + ")");
        p.params.emplace_back(spec.name, ParamValue(x));
        break;
      }
      case ParamSpec::Kind::kBool: {
        bool b = false;
        if (!parse_bool(value, b)) BWPROF_INVALID(spec.name + ": expected true or false, got '" + value + "'");
        p.params.emplace_back(spec.name, ParamValue(b));
        break;
      }
      case ParamSpec::Kind::kChoice:
        if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
          BWPROF_INVALID(spec.name + ": unknown value '" + value + "' (choices: " + join(spec.choices) + ")");
        p.params.emplace_back(spec.name, ParamValue(value));
        break;
    }
    if (!spec.in_shape_at_default && value == spec.default_value) p.unshown.push_back(spec.name);
    if (value != spec.default_value && !spec.variants.empty() &&
        std::find(spec.variants.begin(), spec.variants.end(), p.variant) == spec.variants.end())
      BWPROF_INVALID(spec.name + ": applies to the " + join(spec.variants) + " variant" +
                     (spec.variants.size() > 1 ? "s" : "") + " of kernel '" + k.name + "', not '" + p.variant + "'");
  }
  if (k.resolve) k.resolve(p);
  if (k.validate) k.validate(p);
  // Every family's traffic formula multiplies its sizes: doing it here catches overflow early.
  Traffic t = k.traffic(p);
  if (!(t.bytes_read + t.bytes_written < 9e18)) BWPROF_INVALID("shape too large: " + p.shape());
  return p;
}

}  // namespace bwprof
