// The STREAM kernels' host arrays and float64 gold.
#include <cmath>
#include <string>

#include "stream/stream.hpp"

namespace bwprof {

StreamData make_stream_data(const Problem& p) {
  std::size_t n = static_cast<std::size_t>(p.i("n"));
  StreamData d;
  d.a = HostTensor(p.dtype, n, "stream array a");
  d.a.fill_random(11);
  if (stream_op(p) == "read") return d;  // one array: the curve's read reaches 1 GiB on a GPU
  d.b = HostTensor(p.dtype, n, "stream array b");
  d.c = HostTensor(p.dtype, n, "stream array c");
  d.b.fill_random(12);
  d.c.fill_random(13);
  return d;
}

Check stream_check(const StreamData& d, const Problem& p) {
  // Each kernel writes one array and never its own inputs, so the check holds after any number
  // of launches.
  const std::string op = stream_op(p);
  const std::size_t n = d.a.size();
  ErrorMeter m;
  const double s = d.scalar;
  if (op == "read") {
    // Random values of both signs: the sum is small against sum |a_i|, which sets the scale.
    double gold = 0, scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
      gold += d.a.get(i);
      scale += std::fabs(d.a.get(i));
    }
    m.add(d.sum, gold);
    m.add_scale(scale);
    return m.finish(1e-5);
  }
  if (op == "dot") {
    double gold = 0, scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double x = double(d.a.get(i)) * d.b.get(i);
      gold += x;
      scale += std::fabs(x);
    }
    m.add(d.dot, gold);
    m.add_scale(scale);  // error relative to sum |a_i b_i|: the conditioning of the sum
    return m.finish(1e-5);
  }
  for (std::int64_t i : sample_indices(static_cast<std::int64_t>(n), 1 << 16)) {
    if (op == "copy") m.add(d.c.get(i), d.a.get(i));
    else if (op == "scale") m.add(d.b.get(i), s * d.c.get(i));
    else if (op == "add") m.add(d.c.get(i), double(d.a.get(i)) + d.b.get(i));
    else m.add(d.a.get(i), d.b.get(i) + s * d.c.get(i));
  }
  return m.finish(tolerance_for(p.dtype));
}

}  // namespace bwprof
