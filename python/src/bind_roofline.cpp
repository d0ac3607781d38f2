// bwprof._core: the one roofline judgement, over columns (judge) and over one row (judge_row).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "bindings.hpp"
#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/measurement.hpp"
#include "bwprof/roofline.hpp"
#include "bwprof/runner.hpp"
#include "bwprof/size_curve.hpp"
#include "bwprof/stats.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace bwprof_python {

namespace {

AccessPattern parse_pattern(const std::string& s) {
  for (auto p : {AccessPattern::kCoalesced, AccessPattern::kStrided, AccessPattern::kGather, AccessPattern::kBroadcast})
    if (s == to_string(p)) return p;
  if (s.empty()) return AccessPattern::kCoalesced;
  throw InvalidArgument("access_pattern: unknown pattern '" + s + "' (coalesced, strided, gather, broadcast)");
}

// The one judgement over columns: every list as long as `bytes` (strings may be one value for all).
py::dict judge_columns(const py::dict& c) {
  auto nums = [&](const char* key, std::size_t n, double def) {
    std::vector<double> v(n, def);
    if (c.contains(key) && !c[key].is_none()) {
      v = c[key].cast<std::vector<double>>();
      if (v.size() != n) throw InvalidArgument(std::string(key) + ": expected " + std::to_string(n) + " values");
    }
    return v;
  };
  auto strs = [&](const char* key, std::size_t n) {
    std::vector<std::string> v(n);
    if (c.contains(key) && !c[key].is_none()) {
      if (py::isinstance<py::str>(c[key])) return std::vector<std::string>(n, c[key].cast<std::string>());
      v = c[key].cast<std::vector<std::string>>();
      if (v.size() != n) throw InvalidArgument(std::string(key) + ": expected " + std::to_string(n) + " values");
    }
    return v;
  };
  if (!c.contains("bytes")) throw InvalidArgument("bytes: required");
  const std::vector<double> bytes = c["bytes"].cast<std::vector<double>>();
  const std::size_t n = bytes.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto flops = nums("flops", n, 0), time_us = nums("time_us", n, nan), bw = nums("bandwidth_gbs", n, nan),
             fl = nums("gflops", n, nan), bw_roof = nums("bandwidth_roof_gbs", n, 0),
             bw_theo = nums("bandwidth_theoretical_gbs", n, 0), fl_roof = nums("gflops_roof", n, 0),
             fl_theo = nums("gflops_theoretical", n, 0), size_t0 = nums("size_fixed_cost_us", n, 0),
             size_bw = nums("size_bandwidth_gbs", n, 0), l2_roof = nums("l2_roof_gbs", n, 0),
             l1_roof = nums("l1_roof_gbs", n, 0);
  auto bools = [&](const char* key) {  // optional, one bool a row
    std::vector<bool> v(n, false);
    if (c.contains(key) && !c[key].is_none()) {
      v = c[key].cast<std::vector<bool>>();
      if (v.size() != n) throw InvalidArgument(std::string(key) + ": expected " + std::to_string(n) + " values");
    }
    return v;
  };
  const std::vector<bool> waited = bools("host_waited"), missing = bools("compute_missing");
  const auto dtype = strs("dtype", n), pattern = strs("access_pattern", n), cache = strs("cache", n),
             name = strs("compute_name", n), link = strs("link", n), hint = strs("flops_hint", n);
  std::vector<double> o_bw(n), o_fl(n), o_bw_pct(n), o_fl_pct(n), o_att(n), o_eff(n), o_int(n), o_att_bw(n), o_pct_att(n), o_fixed(n);
  std::vector<std::string> o_bound(n), o_grade(n), o_text(n);
  std::vector<bool> o_above(n);
  for (std::size_t i = 0; i < n; ++i) {
    Work w;
    w.bytes = bytes[i];
    w.flops = flops[i];
    w.time_us = time_us[i];
    w.bandwidth_gbs = bw[i];
    w.gflops = fl[i];
    w.dtype = dtype[i];
    w.pattern = parse_pattern(pattern[i]);
    w.cache = cache[i];
    w.flops_hint = hint[i];
    w.host_waited = waited[i];
    Roofs r;
    r.bandwidth_gbs = bw_roof[i];
    r.bandwidth_theoretical_gbs = bw_theo[i];
    r.gflops = fl_roof[i];
    r.gflops_theoretical = fl_theo[i];
    r.compute_name = name[i];
    r.compute_missing = missing[i];
    r.link = link[i];
    r.size_t0_us = size_t0[i];
    r.size_bandwidth_gbs = size_bw[i];
    r.l2_gbs = l2_roof[i];
    r.l1_gbs = l1_roof[i];
    const Judgement j = judge(w, r);
    o_bw[i] = j.bandwidth_gbs;
    o_fl[i] = j.gflops;
    o_bw_pct[i] = j.bandwidth_pct_peak;
    o_fl_pct[i] = j.compute_pct_peak;
    o_att[i] = j.attainable_gflops;
    o_eff[i] = j.roofline_efficiency_pct;
    o_int[i] = j.intensity_flop_per_byte;
    o_att_bw[i] = j.attainable_bandwidth_gbs;
    o_pct_att[i] = j.bandwidth_pct_attainable;
    o_fixed[i] = j.fixed_cost_pct;
    o_bound[i] = j.bound;
    o_grade[i] = j.grade;
    o_text[i] = j.bottleneck;
    o_above[i] = j.above_peak;
  }
  py::dict out;
  out["bandwidth_gbs"] = o_bw;  // achieved: as given, or derived from bytes, FLOPs and time
  out["gflops"] = o_fl;
  out["bandwidth_pct_peak"] = o_bw_pct;
  out["compute_pct_peak"] = o_fl_pct;
  out["attainable_gflops"] = o_att;
  out["roofline_efficiency_pct"] = o_eff;
  out["intensity_flop_per_byte"] = o_int;
  out["attainable_bandwidth_gbs"] = o_att_bw;
  out["bandwidth_pct_attainable"] = o_pct_att;
  out["fixed_cost_pct"] = o_fixed;
  out["bound"] = o_bound;
  out["grade"] = o_grade;
  out["bottleneck"] = o_text;
  out["above_peak"] = o_above;
  return out;
}

DeviceInfo device_from(const py::dict& d) {
  DeviceInfo i;
  i.id = str_or(d, "id", "gpu:0");
  i.kind = str_or(d, "kind", "gpu");
  i.name = str_or(d, "name");
  i.vendor = str_or(d, "vendor");
  i.arch = str_or(d, "arch");
  i.backend = str_or(d, "backend", i.kind == "cpu" ? "cpu" : "cuda");
  i.bandwidth_theoretical_gbs = num_or(d, "bandwidth_theoretical_gbs");
  i.fp32_gflops_theoretical = num_or(d, "fp32_gflops_theoretical");
  i.fp16_gflops_theoretical = num_or(d, "fp16_gflops_theoretical");
  i.fp16_matrix_gflops_theoretical = num_or(d, "fp16_matrix_gflops_theoretical");
  return i;
}

Peaks peaks_from(const py::dict& d) {
  Peaks p;
  p.bandwidth_gbs = num_or(d, "bandwidth_gbs");
  p.bandwidth_theoretical_gbs = num_or(d, "bandwidth_theoretical_gbs");
  p.gflops = num_or(d, "gflops");
  p.gflops_theoretical = num_or(d, "gflops_theoretical");
  p.bandwidth_source = str_or(d, "bandwidth_source");
  p.compute_source = str_or(d, "compute_source");
  p.compute_arithmetic = str_or(d, "compute_arithmetic");
  // Every type's compute roof, as a peaks dict gives them ({"fp64": {"gflops": ..., ...}}).
  for (const char* units : {"vector", "matrix"}) {
    if (!d.contains(units) || !py::isinstance<py::dict>(d[units])) continue;
    auto& table = std::string(units) == "vector" ? p.vector : p.matrix;
    for (const auto& kv : py::reinterpret_borrow<py::dict>(d[units])) {
      if (!py::isinstance<py::dict>(kv.second)) continue;
      const py::dict f = py::reinterpret_borrow<py::dict>(kv.second);
      ComputePeak c;
      c.gflops = num_or(f, "gflops");
      c.gflops_theoretical = num_or(f, "gflops_theoretical");
      c.source = str_or(f, "source", "none");
      table[py::str(kv.first).cast<std::string>()] = c;
    }
  }
  // The size curve, as a peaks dict gives it (size_curve: its lines, or one line from an older
  // dict's t0_us and bandwidth_gbs), or a record (size_fixed_cost_us, ...: the row's own line,
  // then used whatever the write fraction).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto add_line = [&](double t0, double bw, double w) {
    if (!(std::isfinite(t0) && std::isfinite(bw) && bw > 0 && t0 >= 0)) return;
    SizeLine l;
    l.t0_us = t0;
    l.bandwidth_gbs = bw;
    l.write_fraction = std::isfinite(w) ? w : 0.0;
    l.pattern = size_pattern_name(l.write_fraction);
    p.size_curve.lines.push_back(l);
  };
  if (d.contains("size_curve") && py::isinstance<py::dict>(d["size_curve"])) {
    const py::dict c = d["size_curve"];
    if (c.contains("lines") && py::isinstance<py::list>(c["lines"])) {
      for (const py::handle h : py::list(c["lines"]))
        if (py::isinstance<py::dict>(h)) {
          const py::dict l = py::reinterpret_borrow<py::dict>(h);
          add_line(num_or(l, "t0_us", nan), num_or(l, "bandwidth_gbs", nan), num_or(l, "write_fraction", 0.0));
        }
      std::sort(p.size_curve.lines.begin(), p.size_curve.lines.end(),
                [](const SizeLine& a, const SizeLine& b) { return a.write_fraction < b.write_fraction; });
    }
    if (p.size_curve.lines.empty()) add_line(num_or(c, "t0_us", nan), num_or(c, "bandwidth_gbs", nan), 0.0);
  }
  if (p.size_curve.lines.empty())
    add_line(num_or(d, "size_fixed_cost_us", nan), num_or(d, "size_bandwidth_gbs", nan), 0.0);
  p.matrix_gflops = num_or(d, "matrix_gflops");
  p.matrix_gflops_theoretical = num_or(d, "matrix_gflops_theoretical");
  p.matrix_source = str_or(d, "matrix_source", "none");
  p.l2_gbs = num_or(d, "l2_gbs");
  p.l1_gbs = num_or(d, "l1_gbs");
  p.cache_source = str_or(d, "cache_source", "none");
  return p;
}

}  // namespace

void bind_roofline(py::module_& m) {
  m.def("grade", &grade, py::arg("pct_of_peak"));

  m.def("judge", &judge_columns, py::arg("columns"),
        "The one roofline judgement over columns (bytes, flops (NaN: unknown), time_us, bandwidth_gbs, gflops, dtype, "
        "access_pattern, cache, and the roofs bandwidth_roof_gbs, bandwidth_theoretical_gbs, gflops_roof, "
        "gflops_theoretical, compute_name, compute_missing (bools: no roof of the arithmetic is known), and the size curve's size_fixed_cost_us, size_bandwidth_gbs; flops_hint: what the text of a row of unknown FLOPs says to give; host_waited: bools): percentages, attainable, bound, grade, above_peak, bottleneck.");
  m.def("size_line", [](const py::dict& peaks, double write_fraction) {
    const SizeLine l = peaks_from(peaks).size_curve.line(write_fraction);
    py::dict d;
    d["t0_us"] = l.t0_us;
    d["bandwidth_gbs"] = l.bandwidth_gbs;
    d["pattern"] = l.pattern;
    return d;
  }, py::arg("peaks"), py::arg("write_fraction"),
        "The size-aware ceiling's line for work that writes `write_fraction` of the bytes it moves "
        "(interpolated between the measured lines); bandwidth_gbs 0: the peaks carry no size curve.");
  m.def("judge_row", [](const std::string& kernel, const std::string& variant, const py::dict& device,
                        const std::string& dtype, const py::dict& params, double time_us, const py::dict& peaks,
                        const std::string& cache, const std::string& timing) {
    const KernelFamily& k = find_kernel(kernel);
    const DeviceInfo info = device_from(device);
    const std::string kind = info.kind == "cpu" ? "cpu" : "gpu";
    const Problem p = make_problem(k, kind, variant, dtype, params_from(params));
    Measurement m = describe(k, p, info);
    m.cache = cache;
    m.timing = to_string(parse_timing(timing));
    m.time_us = summarize({time_us});
    judge_row(m, k, find_variant(k, kind, p.variant), p, info, peaks_from(peaks));
    return record_dict(m);
  }, py::arg("kernel"), py::arg("variant"), py::arg("device"), py::arg("dtype"), py::arg("params"),
     py::arg("time_us"), py::arg("peaks"), py::arg("cache") = "cold", py::arg("timing") = "single",
     "The record a measurement of this invocation taking time_us would give on `device` (a device-info "
     "dict) with `peaks`: the row path of measure() without running anything (for tests and what-ifs).");
}

}  // namespace bwprof_python
