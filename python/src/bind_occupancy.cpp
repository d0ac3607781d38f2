// bwprof._core: the occupancy calculator (docs/occupancy.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>

#include "bindings.hpp"
#include "bwprof/occupancy.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace bwprof_python {

namespace {

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

}  // namespace

void bind_occupancy(py::module_& m) {
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
}

}  // namespace bwprof_python
