#include <Python.h>

#include "actors/evaluator/python/harness_functions.h"

namespace drk::evaluator {
namespace {

// A dict of `mapping`'s callable values.
PyRef callables_of(PyObject* mapping) {
  PyRef callables(PyDict_New());
  PyRef items(PyMapping_Items(mapping));
  const Py_ssize_t count = items ? PyList_Size(items.get()) : 0;
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = PyList_GetItem(items.get(), i);  // borrowed, as are its parts
    PyObject* value = PyTuple_GetItem(item, 1);
    if (PyCallable_Check(value)) PyDict_SetItem(callables.get(), PyTuple_GetItem(item, 0), value);
  }
  PyErr_Clear();
  return callables;
}

}  // namespace

Result<HarnessFunctions> HarnessFunctions::snapshot() {
  HarnessFunctions functions;
  auto add = [&](std::string name, PyObject* live) {
    if (live) functions.namespaces_.push_back({std::move(name), PyRef::borrow(live), callables_of(live)});
  };
  auto add_module = [&](const char* name) -> Status {
    PyRef module(PyImport_ImportModule(name));
    if (!module) return make_error(Errc::unsupported, std::string("cannot import ") + name + ": " + python_error_text());
    add(name, PyModule_GetDict(module.get()));
    return {};
  };
  // A class's own attributes and its bases', under the class's name: a method patched on a base
  // (torch._C._TensorBase.add) is the class's too.
  auto add_class = [&](const char* module_name, const char* class_name) -> Status {
    PyRef module(PyImport_ImportModule(module_name));
    PyRef type(module ? PyObject_GetAttrString(module.get(), class_name) : nullptr);
    PyRef mro(type ? PyObject_GetAttrString(type.get(), "__mro__") : nullptr);
    if (!mro)
      return make_error(Errc::unsupported, std::string("cannot read ") + module_name + "." + class_name + ": " +
                                               python_error_text());
    for (Py_ssize_t i = 0; i < PyTuple_Size(mro.get()); ++i) {
      PyObject* base = PyTuple_GetItem(mro.get(), i);
      if (base == reinterpret_cast<PyObject*>(&PyBaseObject_Type)) continue;
      PyRef proxy(PyObject_GetAttrString(base, "__dict__"));
      add(std::string(module_name) + "." + class_name, proxy.get());
    }
    return {};
  };
  for (const char* module : {"torch", "torch.nn.functional", "time"})
    if (auto added = add_module(module); !added) return added.error();
  if (auto added = add_class("torch", "Tensor"); !added) return added.error();
  if (auto added = add_class("torch.cuda", "Event"); !added) return added.error();
  return functions;
}

std::string HarnessFunctions::first_replaced() const {
  for (const auto& space : namespaces_) {
    PyObject* key = nullptr;
    PyObject* original = nullptr;
    for (Py_ssize_t position = 0; PyDict_Next(space.original.get(), &position, &key, &original);) {
      PyRef now(PyObject_GetItem(space.live.get(), key));
      if (now.get() == original) continue;
      PyErr_Clear();  // a deleted attribute: a KeyError
      const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
      return space.name + "." + (name ? name : "?");
    }
  }
  return "";
}

}  // namespace drk::evaluator
