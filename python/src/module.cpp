// bwprof._core: the C++ core seen from Python. Thin on purpose: conversions and bindings only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <new>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/interrupt.hpp"
#include "bwprof/measurement.hpp"
#include "bwprof/occupancy.hpp"
#include "bwprof/profiler.hpp"
#include "bwprof/roofline.hpp"
#include "bwprof/size_curve.hpp"
#include "bwprof/stats.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace {

py::object to_py(const Measurement::Value& v) {
  if (auto s = std::get_if<std::string>(&v)) return py::str(*s);
  if (auto d = std::get_if<double>(&v)) return py::float_(*d);
  if (auto i = std::get_if<std::int64_t>(&v)) return py::int_(*i);
  return py::bool_(std::get<bool>(v));
}

py::dict record_dict(const Measurement& m) {
  py::dict d;
  for (auto& kv : m.record()) d[py::str(kv.first)] = to_py(kv.second);
  return d;
}

py::dict device_dict(const DeviceInfo& i) {
  py::dict d;
  d["id"] = i.id;
  d["kind"] = i.kind;
  d["name"] = i.name;
  d["vendor"] = i.vendor;
  d["arch"] = i.arch;
  d["backend"] = i.backend;
  d["compute_units"] = i.compute_units;
  d["clock_mhz"] = i.clock_mhz;
  d["memory_clock_mhz"] = i.memory_clock_mhz;
  d["memory_bus_bits"] = i.memory_bus_bits;
  d["memory_bytes"] = i.memory_bytes;
  d["cache_bytes"] = i.cache_bytes;
  d["bandwidth_theoretical_gbs"] = i.bandwidth_theoretical_gbs;
  d["fp32_gflops_theoretical"] = i.fp32_gflops_theoretical;
  d["fp16_gflops_theoretical"] = i.fp16_gflops_theoretical;
  d["fp16_matrix_gflops_theoretical"] = i.fp16_matrix_gflops_theoretical;
  // BF16 runs at FP16's rates on every GPU the architecture table knows (vector and matrix units).
  d["bf16_gflops_theoretical"] = i.fp16_gflops_theoretical;
  const auto bf = i.matrix_gflops_theoretical.find("bf16");
  d["bf16_matrix_gflops_theoretical"] =
      bf != i.matrix_gflops_theoretical.end() ? bf->second : i.fp16_matrix_gflops_theoretical;
  d["pci_bus_id"] = i.pci_bus_id;
  d["host_link"] = i.host_link.name;
  d["host_link_kind"] = i.host_link.kind;
  d["host_link_gbs"] = i.host_link.gbs;
  d["matrix_gflops_theoretical"] = i.matrix_gflops_theoretical;
  d["vector_gflops_theoretical"] = i.vector_gflops_theoretical;
  d["l1_cache_bytes"] = i.l1_cache_bytes;
  d["l2_cache_bytes"] = i.l2_cache_bytes;
  return d;
}

// The size-aware memory ceiling: its fit and every measured point (NaN fit when unknown).
py::dict size_curve_dict(const SizeCurve& c) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  py::dict d;
  d["t0_us"] = c.known() ? c.t0_us : nan;
  d["bandwidth_gbs"] = c.known() ? c.bandwidth_gbs : nan;
  d["residual_pct"] = c.known() ? c.residual_pct : nan;
  d["fitted_points"] = c.fitted_points;
  py::list pts;
  for (const SizePoint& p : c.points) {
    py::dict x;
    x["kernel"] = p.kernel;
    x["bytes"] = p.bytes;
    x["time_us"] = p.time_us;
    x["bandwidth_gbs"] = p.bytes / p.time_us / 1e3;
    pts.append(x);
  }
  d["points"] = pts;
  return d;
}

py::dict peaks_dict(const Peaks& p) {
  py::dict d;
  d["bandwidth_gbs"] = p.bandwidth_gbs;
  d["bandwidth_source"] = p.bandwidth_source;
  d["bandwidth_theoretical_gbs"] = p.bandwidth_theoretical_gbs;
  d["gflops"] = p.gflops;
  d["compute_source"] = p.compute_source;
  d["gflops_theoretical"] = p.gflops_theoretical;
  d["bandwidth_by_kernel"] = p.bandwidth_by_kernel;
  d["size_curve"] = size_curve_dict(p.size_curve);
  d["matrix_gflops"] = p.matrix_gflops;
  d["matrix_gflops_theoretical"] = p.matrix_gflops_theoretical;
  d["matrix_source"] = p.matrix_source;
  d["l2_gbs"] = p.l2_gbs;
  d["l1_gbs"] = p.l1_gbs;
  d["cache_source"] = p.cache_source;
  // Every roof the device has, whatever the dtype: {"matrix": {type: {...}}, "vector": ...}.
  auto compute = [](const std::map<std::string, ComputePeak>& m) {
    py::dict out;
    for (auto& kv : m) {
      py::dict c;
      c["gflops"] = kv.second.gflops;
      c["gflops_theoretical"] = kv.second.gflops_theoretical;
      c["source"] = kv.second.source;
      out[py::str(kv.first)] = c;
    }
    return out;
  };
  d["matrix"] = compute(p.matrix);
  d["vector"] = compute(p.vector);
  py::dict levels;
  for (auto& kv : p.levels) {
    py::dict l;
    l["read_gbs"] = kv.second.read_gbs;
    l["rw_gbs"] = kv.second.rw_gbs;
    l["working_set_bytes"] = kv.second.working_set_bytes;
    l["source"] = kv.second.source;
    levels[py::str(kv.first)] = l;
  }
  d["levels"] = levels;
  return d;
}

py::object param_value(const ParamValue& v) {
  if (v.is_int()) return py::int_(v.as_int());
  if (v.is_bool()) return py::bool_(v.as_bool());
  return py::str(v.as_text());
}

py::dict param_dict(const ParamList& params) {
  py::dict d;
  for (auto& kv : params) d[py::str(kv.first)] = param_value(kv.second);
  return d;
}

py::list dtype_list(const std::vector<DType>& dtypes) {
  py::list out;
  for (auto t : dtypes) out.append(to_string(t));
  return out;
}

py::list kernel_list() {
  py::list out;
  for (auto& k : kernel_registry()) {
    py::dict d;
    d["name"] = k.name;
    d["family"] = k.family;
    d["doc"] = k.doc;
    d["access_pattern"] = to_string(k.pattern);
    py::list dts;
    for (auto t : k.dtypes) dts.append(to_string(t));
    d["dtypes"] = dts;
    py::list params;
    for (auto& p : k.params) {
      py::dict pd;
      pd["name"] = p.name;
      pd["default"] = p.default_value;
      pd["help"] = p.help;
      pd["choices"] = p.choices;
      pd["kind"] = p.kind == ParamSpec::Kind::kInt ? "int" : p.kind == ParamSpec::Kind::kBool ? "bool" : "choice";
      if (p.kind == ParamSpec::Kind::kInt) {  // the range make_problem() accepts
        pd["min"] = p.min;
        pd["max"] = p.max;
      }
      params.append(pd);
    }
    d["params"] = params;
    py::list variants;
    for (auto& v : k.variants) {
      py::dict vd;
      vd["name"] = v.name;
      vd["backend"] = v.backend;
      py::list vdts;  // the variant's own dtypes, else the family's
      for (auto t : (v.dtypes.empty() ? k.dtypes : v.dtypes)) vdts.append(to_string(t));
      vd["dtypes"] = vdts;
      vd["matrix_units"] = v.matrix_units;
      py::list mdts;  // the dtypes this variant runs on the matrix units (judged against their roof)
      for (auto t : (v.dtypes.empty() ? k.dtypes : v.dtypes))
        if (runs_on_matrix_units(v, t)) mdts.append(to_string(t));
      vd["matrix_dtypes"] = mdts;
      vd["ceiling"] = to_string(v.ceiling);
      variants.append(vd);
    }
    d["variants"] = variants;
    d["order"] = k.order;
    d["default_suite"] = k.default_suite;
    d["suite_order"] = k.suite_order >= 0 ? k.suite_order : k.order;
    py::list suite;
    for (auto& c : k.suite) {
      py::dict cd;
      cd["label"] = c.label;
      cd["quick_label"] = c.quick_label;
      cd["params"] = param_dict(c.params);
      cd["quick"] = param_dict(c.quick);
      cd["variants"] = c.variants;
      cd["dtypes"] = dtype_list(c.dtypes);
      suite.append(cd);
    }
    d["suite"] = suite;
    out.append(d);
  }
  return out;
}

// Python keyword values (int, bool, str) as the core's parameter text.
std::map<std::string, std::string> params_from(const py::dict& kw) {
  std::map<std::string, std::string> out;
  for (auto item : kw) {
    std::string key = py::str(item.first);
    py::handle v = item.second;
    if (py::isinstance<py::bool_>(v)) {
      out[key] = v.cast<bool>() ? "true" : "false";
    } else if (py::isinstance<py::int_>(v)) {
      out[key] = py::str(v);
    } else if (py::isinstance<py::float_>(v)) {
      double d = v.cast<double>();
      if (!std::isfinite(d) || d != std::floor(d)) throw InvalidArgument(key + ": expected an integer, got " + std::string(py::str(v)));
      out[key] = std::to_string(static_cast<long long>(d));
    } else if (py::isinstance<py::str>(v)) {
      out[key] = v.cast<std::string>();
    } else {
      throw InvalidArgument(key + ": expected an int, bool or str, got " + std::string(py::str(py::type::handle_of(v).attr("__name__"))));
    }
  }
  return out;
}

// Unlimited limits (Occupancy::kUnlimited) become None.
py::object blocks_or_none(int blocks) {
  if (blocks == Occupancy::kUnlimited) return py::none();
  return py::int_(blocks);
}

py::dict occupancy_dict(const Occupancy& o) {
  py::dict d;
  d["arch"] = o.arch;
  d["family"] = o.family;
  d["vendor"] = o.vendor;
  d["unit"] = o.unit;
  d["wave_size"] = o.wave_size;
  d["threads_per_block"] = o.threads_per_block;
  d["registers_per_thread"] = o.registers_per_thread;
  d["shared_mem_per_block"] = o.shared_mem_per_block;
  d["warps_per_block"] = o.warps_per_block;
  d["active_blocks"] = o.active_blocks;
  d["active_warps"] = o.active_warps;
  d["max_warps"] = o.max_warps;
  d["occupancy_pct"] = o.occupancy_pct;
  d["limiter"] = o.limiter;
  d["limiters"] = o.limiters;
  py::dict limits, labels;
  for (auto& l : o.limits) {
    limits[py::str(l.name)] = blocks_or_none(l.blocks);
    labels[py::str(l.name)] = l.label;
  }
  d["limits"] = limits;
  d["limit_labels"] = labels;
  d["registers_allocated_per_warp"] = o.registers_allocated_per_warp;
  d["shared_mem_allocated_per_block"] = o.shared_mem_allocated_per_block;
  d["shared_mem_carveout"] = o.shared_mem_carveout;
  d["note"] = o.note;
  d["text"] = limits_text(o);
  d["summary"] = summary_text(o);
  return d;
}


// A number from a dict (missing or None: `def`).
double num_or(const py::dict& d, const char* key, double def = 0) {
  if (!d.contains(key) || d[key].is_none()) return def;
  return d[key].cast<double>();
}
std::string str_or(const py::dict& d, const char* key, const std::string& def = "") {
  if (!d.contains(key) || d[key].is_none()) return def;
  return py::str(d[key]);
}

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
  const auto dtype = strs("dtype", n), pattern = strs("access_pattern", n), cache = strs("cache", n),
             name = strs("compute_name", n), link = strs("link", n);
  std::vector<double> o_bw_pct(n), o_fl_pct(n), o_att(n), o_eff(n), o_int(n), o_att_bw(n), o_pct_att(n), o_fixed(n);
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
    Roofs r;
    r.bandwidth_gbs = bw_roof[i];
    r.bandwidth_theoretical_gbs = bw_theo[i];
    r.gflops = fl_roof[i];
    r.gflops_theoretical = fl_theo[i];
    r.compute_name = name[i];
    r.link = link[i];
    r.size_t0_us = size_t0[i];
    r.size_bandwidth_gbs = size_bw[i];
    r.l2_gbs = l2_roof[i];
    r.l1_gbs = l1_roof[i];
    const Judgement j = judge(w, r);
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
  // The size curve's fit, as a peaks dict (size_curve) or a record (size_fixed_cost_us, ...) gives it.
  double t0 = num_or(d, "size_fixed_cost_us", std::numeric_limits<double>::quiet_NaN());
  double bw = num_or(d, "size_bandwidth_gbs", std::numeric_limits<double>::quiet_NaN());
  if (d.contains("size_curve") && py::isinstance<py::dict>(d["size_curve"])) {
    const py::dict c = d["size_curve"];
    t0 = num_or(c, "t0_us", t0);
    bw = num_or(c, "bandwidth_gbs", bw);
  }
  if (std::isfinite(t0) && std::isfinite(bw) && bw > 0 && t0 >= 0) {
    p.size_curve.t0_us = t0;
    p.size_curve.bandwidth_gbs = bw;
  }
  p.matrix_gflops = num_or(d, "matrix_gflops");
  p.matrix_gflops_theoretical = num_or(d, "matrix_gflops_theoretical");
  p.matrix_source = str_or(d, "matrix_source", "none");
  p.l2_gbs = num_or(d, "l2_gbs");
  p.l1_gbs = num_or(d, "l1_gbs");
  p.cache_source = str_or(d, "cache_source", "none");
  return p;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "bwprof C++ core";
  load_builtins();
  m.attr("__version__") = BWPROF_VERSION;
  m.attr("SCHEMA_VERSION") = kSchemaVersion;
#ifdef BWPROF_WITH_GPU
  m.attr("GPU_BUILD") = true;
#else
  m.attr("GPU_BUILD") = false;
#endif

  // Created once and never freed: it must outlive every translator call, even at exit.
  static PyObject* bwprof_error = PyErr_NewException("bwprof._core.BwprofError", PyExc_RuntimeError, nullptr);
  m.attr("BwprofError") = py::handle(bwprof_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(bwprof_error, e.what());
    }
  });

  // Ctrl-C during a long call (measure, peaks): the core asks between launches, with the GIL
  // released; a pending signal runs Python's handler here, and the exception it raises
  // (KeyboardInterrupt, or the CLI's own for SIGTERM) travels back through the core to the caller.
  set_interrupt_check([] {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  });

  py::class_<Measurement>(m, "Measurement", "One measured kernel invocation (a flat record).")
      .def("to_dict", &record_dict, "The record as a dict, columns in schema order.")
      .def_property_readonly("kernel", [](const Measurement& x) { return x.kernel; })
      .def_property_readonly("variant", [](const Measurement& x) { return x.variant; })
      .def_property_readonly("dtype", [](const Measurement& x) { return x.dtype; })
      .def_property_readonly("shape", [](const Measurement& x) { return x.shape; })
      .def_property_readonly("params", [](const Measurement& x) {
        py::dict d;
        for (auto& kv : x.params) d[py::str(kv.first)] = kv.second;
        return d;
      })
      .def_property_readonly("time_median_us", [](const Measurement& x) { return x.time_us.median; })
      .def_property_readonly("bandwidth_gbs", [](const Measurement& x) { return x.bandwidth_gbs; })
      .def_property_readonly("gflops", [](const Measurement& x) { return x.gflops; })
      .def_property_readonly("bound", [](const Measurement& x) { return x.bound; })
      .def_property_readonly("bottleneck", [](const Measurement& x) { return x.bottleneck; })
      .def_property_readonly("verified", [](const Measurement& x) { return x.verified; })
      .def("__repr__", [](const Measurement& x) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "<Measurement %s/%s %s %s: %.3g us, %.1f GB/s, %s>", x.kernel.c_str(),
                      x.variant.c_str(), x.dtype.c_str(), x.shape.c_str(), x.time_us.median, x.bandwidth_gbs,
                      x.bound.c_str());
        return std::string(buf);
      });

  m.def("columns", &Measurement::columns, "The result schema's columns, in order.");
  m.def("peer_links", [] {
    py::list out;
    for (auto& p : peer_links()) {
      py::dict d;
      d["src"] = "gpu:" + std::to_string(p.a);
      d["dst"] = "gpu:" + std::to_string(p.b);
      d["link"] = p.link.name;
      d["link_kind"] = p.link.kind;
      d["link_gbs"] = p.link.gbs;
      d["direct"] = p.direct;
      out.append(d);
    }
    return out;
  }, "The link between every ordered pair of GPUs (src -> dst), and whether they reach each other directly.");
  m.def("collective_library", &collective_library,
        "The collective library (NCCL/RCCL) as loaded: name, version, path; ValueError naming it when absent.");
  m.def("collective_search_dir", &collective_search_dir, py::arg("dir"),
        "A folder to look for the collective library in.");
  m.def("collective_job_id", [] { return py::bytes(collective_job_id()); },
        "A new job id (rank 0 makes it and shares it with the other ranks).");
  m.def("collective_join_job", [](const py::bytes& id, int world_size, int rank, const std::string& device) {
    const std::string s = id;
    py::gil_scoped_release nogil;  // ncclCommInitRank waits for every rank
    collective_join_job(s, world_size, rank, device);
  }, py::arg("job_id"), py::arg("world_size"), py::arg("rank"), py::arg("device"),
     "Join a job's communicator as `rank` of `world_size` on `device`.");
  m.def("collective_leave_job", &collective_leave_job, "Leave the job's communicator.");
  m.def("build_features", &build_features, "What this build carries: cpu, cuda/hip, sm90a, vendor_blas.");
  m.def("kernels", &kernel_list, "Every kernel: parameters, dtypes, variants with their flags, suite configurations.");
  m.def("devices", [] {
    py::list out;
    for (auto& d : list_devices()) out.append(device_dict(d));
    return out;
  }, "Every device this build can use (GPUs first, the CPU last).");
  m.def("device_info", [](const std::string& id) { return device_dict(backend_for(id).info()); }, py::arg("device"));
  m.def("peaks", [](const std::string& id, const std::string& dtype, bool refresh) {
    backend_for(id);  // an unknown device or dtype fails before the GIL is released
    parse_dtype(dtype);
    Peaks p;
    {
      py::gil_scoped_release nogil;
      p = peaks(id, dtype, refresh);
    }
    return peaks_dict(p);
  }, py::arg("device"), py::arg("dtype") = "fp32", py::arg("refresh") = false);
  m.def("measure", [](const std::string& kernel, const std::string& dtype, const std::string& device,
                      const std::string& variant, const std::string& cache, int warmup, int min_repeats,
                      double min_time_s, int max_repeats, double max_time_s, bool verify, const py::dict& params,
                      const std::string& timing) {
    if (cache != "cold" && cache != "hot") throw InvalidArgument("cache: expected 'cold' or 'hot', got '" + cache + "'");
    if (warmup < 0) throw InvalidArgument("warmup: must be >= 0");
    if (min_repeats < 1) throw InvalidArgument("min_repeats: must be >= 1");
    if (max_repeats < min_repeats) throw InvalidArgument("max_repeats: must be >= min_repeats");
    if (!(min_time_s >= 0) || !(max_time_s >= 0)) throw InvalidArgument("min_time_s/max_time_s: must be >= 0");
    RunOptions opt;
    opt.cold = cache == "cold";
    opt.warmup = warmup;
    opt.min_repeats = min_repeats;
    opt.min_time_s = min_time_s;
    opt.max_repeats = max_repeats;
    opt.max_time_s = max_time_s;
    opt.verify = verify;
    opt.timing = parse_timing(timing);
    auto p = params_from(params);
    py::gil_scoped_release nogil;
    return measure(kernel, dtype, device, variant, p, opt);
  }, py::arg("kernel"), py::arg("dtype"), py::arg("device"), py::arg("variant"), py::arg("cache"),
     py::arg("warmup"), py::arg("min_repeats"), py::arg("min_time_s"), py::arg("max_repeats"),
     py::arg("max_time_s"), py::arg("verify"), py::arg("params"), py::arg("timing") = "single");

  m.def("profile", [](const py::function& fn, const std::string& name, const std::string& device,
                      double bytes_read, double bytes_written, const std::string& bytes_source, double flops,
                      const std::string& dtype, bool matrix_units, const std::string& shape, const std::string& cache,
                      int warmup, int min_repeats, double min_time_s, int max_repeats, double max_time_s,
                      const py::object& stream, const std::string& hold,
                      const std::vector<std::pair<std::uintptr_t, std::size_t>>& buffers) {
    Profiler prof(name, device);
    prof.set_bytes(bytes_read, bytes_written, bytes_source).set_flops(flops).set_dtype(dtype, matrix_units);
    prof.set_shape(shape).set_cache(cache).set_warmup(warmup);
    prof.set_repeats(min_repeats, min_time_s, max_repeats, max_time_s);
    if (!stream.is_none()) prof.set_stream(Stream{reinterpret_cast<void*>(stream.cast<std::uintptr_t>())});
    if (!hold.empty()) prof.set_stream_hold(hold);
    if (!buffers.empty()) {
      std::vector<std::pair<const void*, std::size_t>> b;
      for (auto& x : buffers) b.emplace_back(reinterpret_cast<const void*>(x.first), x.second);
      prof.set_host_buffers(std::move(b));
    }
    // Each call takes the GIL back; the waits on the device run without it.
    const std::function<void()> call = [&fn] {
      py::gil_scoped_acquire gil;
      fn();
    };
    py::gil_scoped_release nogil;
    return prof.measure(call);
  }, py::arg("fn"), py::arg("name"), py::arg("device"), py::arg("bytes_read"), py::arg("bytes_written"),
     py::arg("bytes_source"), py::arg("flops"), py::arg("dtype"), py::arg("matrix_units"), py::arg("shape"),
     py::arg("cache"), py::arg("warmup"), py::arg("min_repeats"), py::arg("min_time_s"), py::arg("max_repeats"),
     py::arg("max_time_s"), py::arg("stream"), py::arg("hold"), py::arg("buffers"),
     "Times a Python callable with bwprof's method on a device (bwprof/profiler.hpp) and returns its row. "
     "stream: a raw stream handle (int) or None for bwprof's own; buffers: (address, bytes) of host memory "
     "a cold CPU run evicts.");

  m.def("summarize", [](const std::vector<double>& samples) {
    TimingStats s = summarize(samples);
    py::dict d;
    d["median"] = s.median; d["min"] = s.min; d["max"] = s.max; d["mean"] = s.mean;
    d["stddev"] = s.stddev; d["cv"] = s.cv; d["count"] = s.count; d["unstable"] = is_unstable(s);
    return d;
  }, py::arg("samples"), "Median, min, max, mean, standard deviation and CV of timing samples.");
  m.def("grade", &grade, py::arg("pct_of_peak"));
  m.def("fit_size_curve", [](const std::vector<py::dict>& points) {
    std::vector<SizePoint> pts;
    for (const py::dict& d : points)
      pts.push_back({str_or(d, "kernel"), num_or(d, "bytes"), num_or(d, "time_us")});
    return size_curve_dict(fit_size_curve(pts));
  }, py::arg("points"),
     "The size-aware ceiling's fit t(B) = t0 + B / BW of points (dicts of kernel, bytes, time_us), as "
     "bwprof.peaks()['size_curve'] gives it.");

  m.def("occupancy", [](const std::string& arch, std::int64_t threads_per_block, std::int64_t registers_per_thread,
                        std::int64_t shared_mem_per_block, bool wave64, bool cu_mode) {
    OccupancyOptions opt;
    opt.wave64 = wave64;
    opt.cu_mode = cu_mode;
    return occupancy_dict(compute_occupancy(arch, threads_per_block, registers_per_thread, shared_mem_per_block, opt));
  }, py::arg("arch"), py::arg("threads_per_block"), py::arg("registers_per_thread"), py::arg("shared_mem_per_block"),
     py::arg("wave64") = false, py::arg("cu_mode") = false,
     "Theoretical occupancy of one block shape on one SM/CU/WGP of an architecture (see docs/occupancy.md).");
  m.def("occupancy_archs", &occupancy_arch_names, "The architectures the occupancy calculator knows.");

  m.def("judge", &judge_columns, py::arg("columns"),
        "The one roofline judgement over columns (bytes, flops, time_us, bandwidth_gbs, gflops, dtype, "
        "access_pattern, cache, and the roofs bandwidth_roof_gbs, bandwidth_theoretical_gbs, gflops_roof, "
        "gflops_theoretical, compute_name, and the size curve's size_fixed_cost_us, size_bandwidth_gbs): percentages, attainable, bound, grade, above_peak, bottleneck.");
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
    judge_row(m, k, find_variant(k, kind, p.variant), info, peaks_from(peaks));
    return record_dict(m);
  }, py::arg("kernel"), py::arg("variant"), py::arg("device"), py::arg("dtype"), py::arg("params"),
     py::arg("time_us"), py::arg("peaks"), py::arg("cache") = "cold", py::arg("timing") = "single",
     "The record a measurement of this invocation taking time_us would give on `device` (a device-info "
     "dict) with `peaks`: the row path of measure() without running anything (for tests and what-ifs).");
}
