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
  // Adds a kernel, kept in `order` (kernels of equal order in the order they were added). Error
  // for a name already registered. Add kernels before measuring: a later add may move the others.
  void add_family(KernelFamily k);
  const std::vector<KernelFamily>& families() const { return families_; }
  // InvalidArgument listing the known names when `name` is not registered.
  const KernelFamily& find(const std::string& name) const;

 private:
  std::vector<KernelFamily> families_;
};

// The process's registry (empty until load_builtins() or a caller's own add_family()).
Registry& registry();

// registry().find(name).
const KernelFamily& find_kernel(const std::string& name);

}  // namespace bwprof
