// bwprof._core: what this build carries, and every kernel family's descriptor as dicts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "bwprof/api.hpp"
#include "bwprof/runner.hpp"

namespace py = pybind11;
using namespace bwprof;

namespace bwprof_python {

namespace {

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
      if (p.kind == ParamSpec::Kind::kInt) {  // the range make_problem() accepts (and "auto" where allowed)
        pd["min"] = p.min;
        pd["max"] = p.max;
        pd["allows_auto"] = p.allows_auto;
      }
      pd["in_shape_at_default"] = p.in_shape_at_default;
      pd["variants"] = p.variants;  // the variants it applies to; empty: every one
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

}  // namespace

void bind_kernels(py::module_& m) {
  m.def("build_features", &build_features, "What this build carries: cpu, cuda/hip, sm90a, vendor_blas.");
  m.def("kernels", &kernel_list, "Every kernel: parameters, dtypes, variants with their flags, suite configurations.");
}

}  // namespace bwprof_python
