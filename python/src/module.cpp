// bwprof._core: the C++ core seen from Python. Thin on purpose: conversions and bindings only.
// Each concern binds itself in a unit of its own (bindings.hpp); this one makes the module, maps
// the core's exceptions onto Python's, and lets Ctrl-C reach a long call.
#include <pybind11/pybind11.h>

#include <exception>

#include "bindings.hpp"
#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/interrupt.hpp"
#include "bwprof/measurement.hpp"

namespace py = pybind11;
using namespace bwprof;

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

  // The Measurement class first: the signatures of the functions that return one name it.
  bwprof_python::bind_run(m);
  bwprof_python::bind_kernels(m);
  bwprof_python::bind_devices(m);
  bwprof_python::bind_links(m);
  bwprof_python::bind_occupancy(m);
  bwprof_python::bind_roofline(m);
  bwprof_python::bind_model(m);
}
