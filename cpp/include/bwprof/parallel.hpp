// A small persistent thread pool for the CPU backend: threads are created once so that timed
// kernels do not pay for thread start-up.
#pragma once
#include <cstddef>
#include <functional>

namespace bwprof {

int cpu_threads();

// Splits [0, n) into contiguous chunks of at least `grain` items, one per worker, and runs
// fn(begin, end) on each; returns when all are done. Exceptions from workers are rethrown.
void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& fn);

}  // namespace bwprof
