// Conversions between the core's types and Python that several binding units use (bindings.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>

#include "bindings.hpp"
#include "bwprof/error.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace {

py::object to_py(const Measurement::Value& v) {
  if (auto s = std::get_if<std::string>(&v)) return py::str(*s);
  if (auto d = std::get_if<double>(&v)) return py::float_(*d);
  if (auto i = std::get_if<std::int64_t>(&v)) return py::int_(*i);
  return py::bool_(std::get<bool>(v));
}

}  // namespace

namespace bwprof_python {

py::dict record_dict(const Measurement& m) {
  py::dict d;
  for (auto& kv : m.record()) d[py::str(kv.first)] = to_py(kv.second);
  return d;
}

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

double num_or(const py::dict& d, const char* key, double def) {
  if (!d.contains(key) || d[key].is_none()) return def;
  return d[key].cast<double>();
}
std::string str_or(const py::dict& d, const char* key, const std::string& def) {
  if (!d.contains(key) || d[key].is_none()) return def;
  return py::str(d[key]);
}

}  // namespace bwprof_python
