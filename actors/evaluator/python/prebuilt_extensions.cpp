#include <Python.h>

#include "actors/evaluator/python/prebuilt_extensions.h"

#include "actors/evaluator/python/python_runtime.h"

namespace drk::evaluator {
namespace {

// `install(prebuilt)` replaces load_inline on the module object, so that a later `from ... import
// load_inline` gets the loader too.
constexpr const char* kLoader = R"(import importlib.util
import torch.utils.cpp_extension


def install(prebuilt):
    loaded = {}

    def load_inline(name, *args, **kwargs):
        if name not in prebuilt:
            raise RuntimeError(f"load_inline(name={name!r}) was not built by the compile step: its arguments must "
                               "be constants drk can read before running the file")
        if name not in loaded:
            spec = importlib.util.spec_from_file_location(name, prebuilt[name])
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[name] = module
        return loaded[name]

    torch.utils.cpp_extension.load_inline = load_inline
)";

}  // namespace

Status install_prebuilt_extensions(const std::vector<PrebuiltModule>& modules) {
  PythonLock lock;
  auto loader = run_module(kLoader, "drk_prebuilt_extensions", "drk_prebuilt_extensions.py");
  if (!loader) return make_error(Errc::internal, "cannot install the load_inline loader: " + loader.error().message);
  PyRef prebuilt(PyDict_New());
  for (const auto& module : modules) {
    PyRef path(PyUnicode_FromString(module.path.c_str()));
    if (!path || PyDict_SetItemString(prebuilt.get(), module.name.c_str(), path.get()) != 0)
      return make_error(Errc::internal, "cannot list the prebuilt module " + module.name + ": " + python_error_text());
  }
  PyRef installed(PyObject_CallMethod(loader->get(), "install", "O", prebuilt.get()));
  if (!installed)
    return make_error(Errc::internal, "cannot install the load_inline loader: " + python_error_text());
  return {};
}

}  // namespace drk::evaluator
