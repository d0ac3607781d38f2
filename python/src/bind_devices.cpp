// bwprof._core: the devices, their properties, and their measured peaks (with the size curve).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "bwprof/api.hpp"
#include "bwprof/arch.hpp"
#include "bwprof/peaks.hpp"
#include "bwprof/size_curve.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace bwprof_python {

namespace {

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

// One line of the size curve (NaN figures when unknown).
py::dict size_line_dict(const SizeLine& l) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  py::dict d;
  d["pattern"] = l.pattern;
  d["kernels"] = l.kernels;
  d["write_fraction"] = l.write_fraction;
  d["t0_us"] = l.known() ? l.t0_us : nan;
  d["bandwidth_gbs"] = l.known() ? l.bandwidth_gbs : nan;
  d["residual_pct"] = l.known() ? l.residual_pct : nan;
  d["max_error_pct"] = l.known() ? l.max_error_pct : nan;
  d["fitted_points"] = l.fitted_points;
  return d;
}

// The size-aware memory ceiling: one line per access pattern (`lines`, the read first), every
// measured point, and at the top the read line's t0 and BW (what a kernel that only reads is judged
// against) with the worst line's residual and the worst point's error (NaN fit when unknown).
py::dict size_curve_dict(const SizeCurve& c) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const SizeLine read = c.line(0.0);
  py::dict d;
  d["t0_us"] = read.known() ? read.t0_us : nan;
  d["bandwidth_gbs"] = read.known() ? read.bandwidth_gbs : nan;
  d["residual_pct"] = c.known() ? c.residual_pct() : nan;
  d["max_error_pct"] = c.known() ? c.max_error_pct() : nan;
  d["fitted_points"] = c.fitted_points();
  py::list lines;
  for (const SizeLine& l : c.lines) lines.append(size_line_dict(l));
  d["lines"] = lines;
  py::list pts;
  for (const SizePoint& p : c.points) {
    py::dict x;
    x["kernel"] = p.kernel;
    x["bytes"] = p.bytes;
    x["time_us"] = p.time_us;
    x["bandwidth_gbs"] = p.bytes / p.time_us / 1e3;
    x["write_fraction"] = p.write_fraction;
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
  d["compute_arithmetic"] = p.compute_arithmetic;
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
  // The hierarchy's levels still out of order after a second measurement (bwprof/peaks.hpp).
  py::list disorder;
  for (const HierarchyFinding& f : p.hierarchy_disorder) {
    py::dict x;
    x["inner"] = f.inner;
    x["outer"] = f.outer;
    x["inner_gbs"] = f.inner_gbs;
    x["outer_gbs"] = f.outer_gbs;
    x["text"] = f.text();
    disorder.append(x);
  }
  d["hierarchy_disorder"] = disorder;
  return d;
}

// The memory figures of a peaks dict (bandwidth_gbs, bandwidth_source, bandwidth_by_kernel, levels),
// as settle_hierarchy reads them.
Peaks memory_peaks_from(const py::dict& d) {
  Peaks p;
  p.bandwidth_gbs = num_or(d, "bandwidth_gbs");
  p.bandwidth_source = str_or(d, "bandwidth_source");
  if (d.contains("bandwidth_by_kernel") && py::isinstance<py::dict>(d["bandwidth_by_kernel"]))
    p.bandwidth_by_kernel = d["bandwidth_by_kernel"].cast<std::map<std::string, double>>();
  if (d.contains("levels") && py::isinstance<py::dict>(d["levels"]))
    for (const auto& kv : py::reinterpret_borrow<py::dict>(d["levels"])) {
      if (!py::isinstance<py::dict>(kv.second)) continue;
      const py::dict l = py::reinterpret_borrow<py::dict>(kv.second);
      LevelPeak x;
      x.read_gbs = num_or(l, "read_gbs");
      x.rw_gbs = num_or(l, "rw_gbs");
      x.working_set_bytes = num_or(l, "working_set_bytes");
      x.source = str_or(l, "source", "none");
      p.levels[py::str(kv.first).cast<std::string>()] = x;
    }
  return p;
}

}  // namespace

void bind_devices(py::module_& m) {
  m.def("settle_hierarchy", [](const py::dict& first, const py::function& remeasure) {
    Peaks p = memory_peaks_from(first);
    settle_hierarchy(p, [&] { return memory_peaks_from(remeasure().cast<py::dict>()); });
    return peaks_dict(p);
  }, py::arg("peaks"), py::arg("remeasure"),
     "The peaks policy's order check on given figures (a peaks dict's bandwidth_gbs, bandwidth_by_kernel "
     "and levels): out of order, remeasure() (a dict of the same keys) is called once and each figure becomes "
     "the better of the two; the result's hierarchy_disorder lists what is still out of order.");
  m.def("devices", [] {
    py::list out;
    for (auto& d : list_devices()) out.append(device_dict(d));
    return out;
  }, "Every device this build can use (GPUs first, the CPU last).");
  m.def("device_info", [](const std::string& id) { return device_dict(device_info(id)); }, py::arg("device"));
  m.def("require_device", [](const std::string& id) { return device_dict(backend_for(id).info()); }, py::arg("device"),
        "The device's description, or the error using it raises (a GPU this build has no code for among them).");
  m.def("gpu_architectures", &gpu_architectures, "The GPU architectures this build's code was built for.");
  m.def("gpu_code_missing", &gpu_code_missing, py::arg("gpu"), py::arg("arch"), py::arg("built"),
        py::arg("refused") = "", "The error a GPU of `arch` gets from a build for `built`, or '' where it has code.");
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
  m.def("fit_size_curve", [](const std::vector<py::dict>& points) {
    std::vector<SizePoint> pts;
    for (const py::dict& d : points)
      pts.push_back({str_or(d, "kernel"), num_or(d, "bytes"), num_or(d, "time_us"), num_or(d, "write_fraction", 0.0)});
    return size_curve_dict(fit_size_curve(pts));
  }, py::arg("points"),
     "The size-aware ceiling's lines t(B) = t0 + B / BW, one per access pattern, of points (dicts of "
     "kernel, bytes, time_us and optionally write_fraction, 0 by default), as bwprof.peaks()['size_curve'] "
     "gives them.");
}

}  // namespace bwprof_python
