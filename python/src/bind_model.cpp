// bwprof._core's workload functions (bwprof/workload.hpp): a step's plan and its whole-step timing,
// for bwprof.workloads. Ops come as dicts whose parameters are already text.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "bindings.hpp"
#include "bwprof/error.hpp"
#include "bwprof/workload.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace {

std::vector<StepOp> ops_from(const py::list& ops) {
  std::vector<StepOp> out;
  for (py::handle h : ops) {
    if (!py::isinstance<py::dict>(h)) throw InvalidArgument("ops: each op must be a dict");
    const py::dict d = py::reinterpret_borrow<py::dict>(h);
    StepOp op;
    op.name = d.contains("name") ? py::str(d["name"]).cast<std::string>() : "";
    if (d.contains("kernel") && !d["kernel"].is_none()) op.kernel = d["kernel"].cast<std::string>();
    if (d.contains("variant") && !d["variant"].is_none()) op.variant = d["variant"].cast<std::string>();
    if (d.contains("dtype") && !d["dtype"].is_none()) op.dtype = d["dtype"].cast<std::string>();
    if (d.contains("params") && !d["params"].is_none())
      op.params = d["params"].cast<std::map<std::string, std::string>>();
    if (d.contains("count")) op.count = d["count"].cast<int>();
    if (d.contains("bytes") && !d["bytes"].is_none()) op.bytes = d["bytes"].cast<double>();
    if (d.contains("fn") && !d["fn"].is_none()) {
      py::function fn = d["fn"].cast<py::function>();
      // Each call takes the GIL back; the waits on the device run without it.
      op.fn = [fn] {
        py::gil_scoped_acquire gil;
        fn();
      };
    }
    out.push_back(std::move(op));
  }
  return out;
}

py::dict plan_dict(const StepPlan& p) {
  py::list ops;
  for (const StepPlanOp& o : p.ops) {
    py::dict d;
    d["name"] = o.name;
    d["kernel"] = o.kernel;
    d["variant"] = o.variant;
    d["dtype"] = o.dtype;
    d["shape"] = o.shape;
    d["count"] = o.count;
    d["sets"] = o.sets;
    d["block"] = o.block;
    d["bytes_read"] = o.bytes_read;
    d["bytes_written"] = o.bytes_written;
    d["flops"] = o.flops;
    d["host_bytes"] = o.host_bytes;
    d["device_bytes"] = o.device_bytes;
    ops.append(d);
  }
  py::dict d;
  d["ops"] = ops;
  d["launches"] = p.launches;
  d["bytes_per_step"] = p.bytes_per_step;
  d["host_bytes"] = p.host_bytes;
  d["device_bytes"] = p.device_bytes;
  d["host_available"] = p.host_available;
  d["device_available"] = p.device_available;
  return d;
}

}  // namespace

namespace bwprof_python {

void bind_model(py::module_& m) {
  m.def("plan_step", [](const std::string& device, const py::list& ops, int sets) {
    std::vector<StepOp> v = ops_from(ops);
    return plan_dict(plan_step(device, v, sets));
  }, py::arg("device"), py::arg("ops"), py::arg("sets") = 0,
     "A workload step's instances and memory (bwprof/workload.hpp), checked before anything is allocated.");
  m.def("time_step", [](const std::string& device, const py::list& ops, int sets, int warmup, int min_repeats,
                        double min_time_s, int max_repeats, double max_time_s, bool verify, bool graph,
                        const py::object& stream) {
    StepOptions opt;
    opt.sets = sets;
    opt.warmup = warmup;
    opt.min_repeats = min_repeats;
    opt.min_time_s = min_time_s;
    opt.max_repeats = max_repeats;
    opt.max_time_s = max_time_s;
    opt.verify = verify;
    opt.graph = graph;
    if (!stream.is_none()) {
      opt.has_stream = true;
      opt.stream = reinterpret_cast<void*>(stream.cast<std::uintptr_t>());
    }
    std::vector<StepOp> v = ops_from(ops);
    StepResult r;
    {
      py::gil_scoped_release nogil;
      r = time_step(device, v, opt);
    }
    py::dict d = plan_dict(r.plan);
    py::dict t;
    t["median"] = r.time_us.median;
    t["min"] = r.time_us.min;
    t["max"] = r.time_us.max;
    t["mean"] = r.time_us.mean;
    t["stddev"] = r.time_us.stddev;
    t["cv"] = r.time_us.cv;
    t["count"] = r.time_us.count;
    d["time_us"] = t;
    d["mode"] = r.mode;
    d["graph_error"] = r.graph_error;
    d["verified"] = r.verified;
    d["max_rel_error"] = r.max_rel_error;
    d["checked"] = r.checked;
    d["sm_clock_mhz"] = std::isfinite(r.sm_clock_mhz) ? py::object(py::float_(r.sm_clock_mhz)) : py::none();
    d["throttled_samples"] = r.throttled_samples;
    d["throttled_retaken"] = r.throttled_retaken;
    return d;
  }, py::arg("device"), py::arg("ops"), py::arg("sets"), py::arg("warmup"), py::arg("min_repeats"),
     py::arg("min_time_s"), py::arg("max_repeats"), py::arg("max_time_s"), py::arg("verify"), py::arg("graph"),
     py::arg("stream"),
     "Times a workload's whole step (one graph on a GPU) and checks its ops; see bwprof/workload.hpp.");
}

}  // namespace bwprof_python
