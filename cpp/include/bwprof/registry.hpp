// The registry: every kernel bwprof can run, as the family folders describe them. The core holds
// the container and names no family; the api layer fills it (load_builtins(), bwprof/api.hpp)
// with every kernels/<family>/family.cpp that the build collected.
#pragma once
#include <string>
#include <vector>

#include "bwprof/kernel.hpp"

namespace bwprof {

class Registry {
 public:
  // Adds a kernel, kept in `order` (kernels of equal order in the order they were added), its
  // suite labels written from their templates (SuiteConfig). Error for a name already registered,
  // or a label naming a parameter the kernel does not have. Add kernels before measuring: a later
  // add may move the others.
  void add_family(KernelFamily k);
  const std::vector<KernelFamily>& families() const { return families_; }
  // InvalidArgument listing the known names when `name` is not registered.
  const KernelFamily& find(const std::string& name) const;

 private:
  std::vector<KernelFamily> families_;
};

// The process's registry (empty until load_builtins() or a caller's own add_family()).
Registry& registry();

// A suite label template with `{name}` / `{name:bin}` replaced from `params` (the spec's default
// for a name `params` lacks); Error for an unknown name, a bad format or an unclosed brace.
std::string expand_label(const KernelFamily& k, const std::string& label, const ParamList& params);

// registry().find(name).
const KernelFamily& find_kernel(const std::string& name);

}  // namespace bwprof
