// Fill's buffer, poisoned, and its exact check.
#include "fill/fill.hpp"

namespace bwprof {

FillData make_fill_data(const Problem& p) {
  FillData d;
  d.y = HostTensor(p.dtype, static_cast<std::size_t>(p.i("n")), "fill buffer");
  d.y.fill(kFillPoison);
  return d;
}

Check fill_check(const FillData& d, const Problem&) {
  ErrorMeter m;
  for (std::size_t i = 0; i < d.y.size(); ++i) m.add(d.y.get(i), kFillValue);
  return m.finish(0.0);  // the constant is exact in both dtypes
}

}  // namespace bwprof
