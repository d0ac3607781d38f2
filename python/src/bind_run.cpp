// bwprof._core: a measurement (the Measurement class, the schema's columns), measure() of a
// built-in kernel, profile() of a Python callable, and the statistics of timing samples.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/profiler.hpp"
#include "bwprof/stats.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace bwprof_python {

void bind_run(py::module_& m) {
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
      .def_property_readonly("target_rel_spread", [](const Measurement& x) { return x.target_rel_spread; })
      .def_property_readonly("spread_target_met", [](const Measurement& x) { return x.spread_target_met; })
      .def_property_readonly("time_cv", [](const Measurement& x) { return x.time_us.cv; })
      .def("__repr__", [](const Measurement& x) {
        char buf[320];
        // A figure above a measured roof says so here too, as every table marks it.
        std::snprintf(buf, sizeof buf, "<Measurement %s/%s %s %s: %.3g us, %.1f GB/s, %s%s>", x.kernel.c_str(),
                      x.variant.c_str(), x.dtype.c_str(), x.shape.c_str(), x.time_us.median, x.bandwidth_gbs,
                      x.bound.c_str(), x.above_peak ? ", ABOVE PEAK (cached data or wrong traffic)" : "");
        return std::string(buf);
      });

  m.def("columns", &Measurement::columns, "The result schema's columns, in order.");
  m.def("measure", [](const std::string& kernel, const std::string& dtype, const std::string& device,
                      const std::string& variant, const std::string& cache, int warmup, int min_repeats,
                      double min_time_s, int max_repeats, double max_time_s, bool verify, const py::dict& params,
                      const std::string& timing, double max_total_s, double target_rel_spread) {
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
    if (!(max_total_s > 0)) throw InvalidArgument("max_total_s: must be > 0 (math.inf: no bound)");
    opt.max_total_s = max_total_s;
    opt.target_rel_spread = target_rel_spread;  // 0: none; the runner checks the range
    auto p = params_from(params);
    py::gil_scoped_release nogil;
    return measure(kernel, dtype, device, variant, p, opt);
  }, py::arg("kernel"), py::arg("dtype"), py::arg("device"), py::arg("variant"), py::arg("cache"),
     py::arg("warmup"), py::arg("min_repeats"), py::arg("min_time_s"), py::arg("max_repeats"),
     py::arg("max_time_s"), py::arg("verify"), py::arg("params"), py::arg("timing") = "single",
     py::arg("max_total_s") = std::numeric_limits<double>::infinity(), py::arg("target_rel_spread") = 0.0);

  m.def("explain", [](const std::string& kernel, const std::string& dtype, const std::string& device,
                      const std::string& variant, const py::dict& params) {
    auto p = params_from(params);
    py::gil_scoped_release nogil;
    return explain(kernel, dtype, device, variant, p);
  }, py::arg("kernel"), py::arg("dtype"), py::arg("device"), py::arg("variant"), py::arg("params"),
     "What the kernel's instance runs where its variant chooses among kernels (bwprof/api.hpp: explain).");

  m.def("profile", [](const py::function& fn, const std::string& name, const std::string& device,
                      double bytes_read, double bytes_written, const std::string& bytes_source,
                      const std::optional<double>& flops, const std::string& flops_source, const std::string& dtype,
                      bool matrix_units, const std::string& shape, const std::string& cache,
                      int warmup, int min_repeats, double min_time_s, int max_repeats, double max_time_s,
                      const py::object& stream, const std::string& hold,
                      const std::vector<std::pair<std::uintptr_t, std::size_t>>& buffers, double max_total_s,
                      double target_rel_spread) {
    Profiler prof(name, device);
    prof.set_max_total_s(max_total_s);
    prof.set_bytes(bytes_read, bytes_written, bytes_source).set_dtype(dtype, matrix_units);
    if (flops) prof.set_flops(*flops, flops_source);  // None: unknown
    prof.set_shape(shape).set_cache(cache).set_warmup(warmup);
    prof.set_repeats(min_repeats, min_time_s, max_repeats, max_time_s);
    prof.set_target_rel_spread(target_rel_spread);
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
     py::arg("bytes_source"), py::arg("flops"), py::arg("flops_source"), py::arg("dtype"), py::arg("matrix_units"), py::arg("shape"),
     py::arg("cache"), py::arg("warmup"), py::arg("min_repeats"), py::arg("min_time_s"), py::arg("max_repeats"),
     py::arg("max_time_s"), py::arg("stream"), py::arg("hold"), py::arg("buffers"),
     py::arg("max_total_s") = std::numeric_limits<double>::infinity(), py::arg("target_rel_spread") = 0.0,
     "Times a Python callable with bwprof's method on a device (bwprof/profiler.hpp) and returns its row. "
     "flops: None when unknown (flops_source: declared, inferred or counters otherwise); "
     "stream: a raw stream handle (int) or None for bwprof's own; buffers: (address, bytes) of host memory "
     "a cold CPU run evicts.");

  m.def("summarize", [](const std::vector<double>& samples) {
    TimingStats s = summarize(samples);
    py::dict d;
    d["median"] = s.median; d["min"] = s.min; d["max"] = s.max; d["mean"] = s.mean;
    d["stddev"] = s.stddev; d["cv"] = s.cv; d["count"] = s.count; d["unstable"] = is_unstable(s);
    return d;
  }, py::arg("samples"), "Median, min, max, mean, standard deviation and CV of timing samples.");
}

}  // namespace bwprof_python
