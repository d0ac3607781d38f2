// What the translation units of bwprof._core share: the conversions more than one of them uses,
// and one bind_<concern>(m) per unit that adds its classes and functions to the module
// (module.cpp calls them in order). Internal to the bindings: not a public header.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "bwprof/measurement.hpp"

namespace bwprof_python {

// A measurement's record as a dict, columns in schema order.
pybind11::dict record_dict(const bwprof::Measurement& m);
// Python keyword values (int, bool, str) as the core's parameter text.
std::map<std::string, std::string> params_from(const pybind11::dict& kw);
// A number or a string from a dict (missing or None: `def`).
double num_or(const pybind11::dict& d, const char* key, double def = 0);
std::string str_or(const pybind11::dict& d, const char* key, const std::string& def = "");

void bind_run(pybind11::module_& m);        // Measurement, columns, measure, profile, summarize
void bind_kernels(pybind11::module_& m);    // build_features, kernels
void bind_devices(pybind11::module_& m);    // devices, device_info, peaks, fit_size_curve
void bind_links(pybind11::module_& m);      // peer_links, the collective library and jobs
void bind_occupancy(pybind11::module_& m);  // occupancy, occupancy_archs
void bind_roofline(pybind11::module_& m);   // grade, judge, judge_row
void bind_model(pybind11::module_& m);      // plan_step, time_step (a workload's step)

}  // namespace bwprof_python
