#include "bwprof/registry.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

// 16777216 -> "16Mi", 262144 -> "256Ki"; a count that is no whole multiple of 1024 as it is.
std::string binary_count(const std::string& text) {
  long long v = std::atoll(text.c_str());
  const char* prefixes[] = {"", "Ki", "Mi", "Gi", "Ti"};
  int i = 0;
  while (v >= 1024 && v % 1024 == 0 && i < 4) v /= 1024, ++i;
  return std::to_string(v) + prefixes[i];
}

}  // namespace

std::string expand_label(const KernelFamily& k, const std::string& label, const ParamList& params) {
  std::string out;
  for (std::size_t i = 0; i < label.size(); ++i) {
    if (label[i] != '{') {
      out += label[i];
      continue;
    }
    const std::size_t close = label.find('}', i);
    if (close == std::string::npos) throw Error("registry: suite label '" + label + "' of '" + k.name + "' has an unclosed {");
    std::string name = label.substr(i + 1, close - i - 1), format;
    if (const std::size_t colon = name.find(':'); colon != std::string::npos) {
      format = name.substr(colon + 1);
      name = name.substr(0, colon);
    }
    std::string value;
    bool found = false;
    for (auto& kv : params)
      if (kv.first == name) value = kv.second.text(), found = true;
    for (auto& spec : k.params)
      if (!found && spec.name == name) value = spec.default_value, found = true;
    if (!found) throw Error("registry: suite label '" + label + "' of '" + k.name + "' names no parameter '" + name + "'");
    if (format == "bin") value = binary_count(value);
    else if (!format.empty()) throw Error("registry: suite label '" + label + "' of '" + k.name + "': unknown format '" + format + "'");
    out += value;
    i = close;
  }
  return out;
}

void Registry::add_family(KernelFamily k) {
  for (auto& f : families_)
    if (f.name == k.name) throw Error("registry: kernel '" + k.name + "' is registered twice");
  for (auto& c : k.suite) {
    const std::string templ = c.label;
    c.label = expand_label(k, templ, c.params);
    c.quick_label = expand_label(k, templ, c.quick);
  }
  auto at = std::upper_bound(families_.begin(), families_.end(), k.order,
                             [](int order, const KernelFamily& f) { return order < f.order; });
  families_.insert(at, std::move(k));
}

const KernelFamily& Registry::find(const std::string& name) const {
  std::string names;
  for (auto& k : families_) {
    if (k.name == name) return k;
    names += (names.empty() ? "" : ", ") + k.name;
  }
  BWPROF_INVALID("kernel: unknown kernel '" + name + "' (known: " + names + ")");
}

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: families outlive every static at exit
  return *r;
}

const KernelFamily& find_kernel(const std::string& name) { return registry().find(name); }

}  // namespace bwprof
