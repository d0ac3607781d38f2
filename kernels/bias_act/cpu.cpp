// Bias + activation (ReLU, GELU, SiLU) fused in one pass on the CPU.
#include "bias_act/bias_act.hpp"
#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"

namespace bwprof {

namespace {
BufferList buffers(const BiasActData& d) {
  BufferList l;
  add_buffer(l, d.x);
  add_buffer(l, d.bias);
  add_buffer(l, d.y);
  return l;
}
}  // namespace

void bias_act_cpu(BiasActData& d, const Problem& p) {
  const std::int64_t R = p.i("rows"), C = p.i("cols");
  const Act act = parse_act(p.s("act"));
  parallel_for(R, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r)
      for (std::int64_t c = 0; c < C; ++c) d.y.set(r * C + c, act_f(act, d.x.get(r * C + c) + d.bias.get(c)));
  });
}

std::unique_ptr<KernelInstance> make_bias_act_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_bias_act_data(p), bias_act_cpu, bias_act_check, buffers);
}

}  // namespace bwprof
