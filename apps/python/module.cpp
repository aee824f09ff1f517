// weft._weft, the compiled part of the `weft` Python package (apps/python/weft/__init__.py;
// docs/PYTHON.md). Built by `pip install .` (pyproject.toml: scikit-build-core and nanobind) or by
// any CMake build with -DWEFT_BUILD_PYTHON=ON.
#include <nanobind/stl/string.h>

#include "apps/python/bindings.h"
#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/table_selection.h"
#include "weft_version.h"

NB_MODULE(_weft, m) {
  using namespace weft;
  m.doc() = "Weft: VBD cloth and AVBD cables on CUDA and CPU (the compiled core of `weft`).";
  nb::exception<Error>(m, "Error", PyExc_RuntimeError);
  m.attr("__version__") = WEFT_VERSION_STRING;
  m.attr("commit") = WEFT_GIT_COMMIT;
  m.def("cuda_devices", &visibleCudaDevices, "How many CUDA GPUs this process sees.");
  m.def("cuda_unavailable_reason", &cudaUnavailableReason,
        "Why no CUDA GPU can be used (built without CUDA, no driver, no device).");
  m.def("_set_packaged_tables_dir", &setPackagedTablesDir);
  m.def("default_tables_dir", &defaultTablesDir,
        "Where the launch tables are looked for (and tune_launch writes by default).");
  python::bindTypes(m);
  python::bindBuilders(m);
  python::bindSimulation(m);
  python::bindCommands(m);
}
