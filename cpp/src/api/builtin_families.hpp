// Calls register_family_<folder>(r) for every kernels/<folder>/family.cpp. Defined in a file the
// build generates (CMakeLists.txt: builtin_families.cpp in the build tree), so that adding a family
// folder touches nothing outside it.
#pragma once
#include "bwprof/registry.hpp"

namespace bwprof {
void register_builtin_families(Registry& r);
}  // namespace bwprof
