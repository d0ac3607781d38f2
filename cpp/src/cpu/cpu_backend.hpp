#pragma once
#include <memory>

#include "bwprof/backend.hpp"

namespace bwprof {
std::unique_ptr<Backend> make_cpu_backend();
}  // namespace bwprof
