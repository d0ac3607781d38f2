#include "bwprof/registry.hpp"

#include <algorithm>

#include "bwprof/error.hpp"

namespace bwprof {

void Registry::add_family(KernelFamily k) {
  for (auto& f : families_)
    if (f.name == k.name) throw Error("registry: kernel '" + k.name + "' is registered twice");
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
