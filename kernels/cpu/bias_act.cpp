// Bias + activation (ReLU, GELU, SiLU) fused in one pass on the CPU.
#include "bwprof/parallel.hpp"
#include "cpu_instance.hpp"
#include "cpu_kernels.hpp"

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

BiasActData make_bias_act_data(const Problem& p) {
  const std::size_t R = p.i("rows"), C = p.i("cols");
  ensure_host_memory(double(2 * R * C + C) * dtype_size(p.dtype), "bias+activation tensors");
  BiasActData d;
  d.x = HostTensor(p.dtype, R * C, "x");
  d.bias = HostTensor(p.dtype, C, "bias");
  d.y = HostTensor(p.dtype, R * C, "y");
  d.x.fill_random(71, -3.0f, 3.0f);
  d.bias.fill_random(72);
  d.y.fill(0.0f);
  return d;
}

void bias_act_cpu(BiasActData& d, const Problem& p) {
  const std::int64_t R = p.i("rows"), C = p.i("cols");
  const Act act = parse_act(p.s("act"));
  parallel_for(R, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r)
      for (std::int64_t c = 0; c < C; ++c) d.y.set(r * C + c, act_f(act, d.x.get(r * C + c) + d.bias.get(c)));
  });
}

Check bias_act_check(const BiasActData& d, const Problem& p) {
  const std::int64_t C = p.i("cols");
  const Act act = parse_act(p.s("act"));
  ErrorMeter m;
  for (std::int64_t r : sample_indices(p.i("rows"), 64))
    for (std::int64_t c = 0; c < C; ++c)
      m.add(d.y.get(r * C + c), act_gold(act, double(d.x.get(r * C + c)) + d.bias.get(c)));
  return m.finish(tolerance_for(p.dtype, 1e-5));
}

std::unique_ptr<KernelInstance> make_bias_act_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_bias_act_data(p), bias_act_cpu, bias_act_check, buffers);
}

}  // namespace bwprof
