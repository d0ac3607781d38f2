// FMA chains on every CPU thread: the CPU's vector compute roof (FP32; the CPU computes FP16-stored
// data in FP32 too). The check recomputes each worker's sum of chains in float64.
#include <algorithm>
#include <cmath>
#include <vector>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "fma_chain/fma_chain.hpp"

namespace bwprof {

namespace {

// v = v * a + b with a = b = 0.5: no value leaves [0, 1] (no denormals, no infinities: the FMA
// units run at full rate whatever the values), no step can be folded away, and every chain
// converges to exactly 1, so the result can be checked.
constexpr float kA = 0.5f, kB = 0.5f;

// Independent FMA chains, enough of them to cover the FMA latency on every vector port; T is
// float (FP32) or double (FP64).
template <typename T>
__attribute__((noinline)) float fma_chain(long iters, T a, T b) {
  T acc[kFmaCpuChains];
  for (int k = 0; k < kFmaCpuChains; ++k) acc[k] = static_cast<T>(static_cast<float>(k) * 1e-3f);
  for (long it = 0; it < iters; ++it)
    for (int k = 0; k < kFmaCpuChains; ++k) acc[k] = acc[k] * a + b;
  T s = 0;
  for (int k = 0; k < kFmaCpuChains; ++k) s += acc[k];
  return static_cast<float>(s);
}

struct FmaData {
  std::vector<float> sink;  // each worker's sum of its chains
};

void run(FmaData& d, const Problem& p) {
  const long iters = static_cast<long>(p.i("iters"));
  const bool fp64 = p.s("math") == "fp64";
  parallel_for(d.sink.size(), 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t)
      d.sink[t] = fp64 ? fma_chain<double>(iters, kA, kB) : fma_chain<float>(iters, kA, kB);
  });
}

Check check(const FmaData& d, const Problem& p) {
  // Past a few dozen steps every chain is 1 in float64 too: stop there.
  const std::int64_t steps = std::min<std::int64_t>(p.i("iters"), 200);
  double gold = 0;
  for (int k = 0; k < kFmaCpuChains; ++k) {
    double v = static_cast<float>(k) * 1e-3f;
    for (std::int64_t it = 0; it < steps; ++it) v = v * kA + kB;
    gold += v;
  }
  ErrorMeter m;
  for (float s : d.sink) m.add(s, gold);
  return m.finish(1e-5);
}

BufferList buffers(const FmaData&) { return {}; }  // registers only: nothing to evict

}  // namespace

std::unique_ptr<KernelInstance> make_fma_chain_cpu(Backend&, const Problem& p) {
  FmaData d;
  d.sink.assign(static_cast<std::size_t>(p.i("workers")), 0.0f);
  return make_cpu_kernel(p, std::move(d), run, check, buffers);
}

}  // namespace bwprof
