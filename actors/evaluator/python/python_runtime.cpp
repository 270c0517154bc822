// Python.h first: it sets feature macros the standard headers read.
#include <Python.h>

#include "actors/evaluator/python/python_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

namespace drk::evaluator {
namespace {

std::mutex start_mutex;
bool started = false;

// A Python string's text ("" for anything else).
std::string text_of(PyObject* object) {
  if (!object) return "";
  PyRef text(PyObject_Str(object));
  if (!text) {
    PyErr_Clear();
    return "";
  }
  const char* utf8 = PyUnicode_AsUTF8(text.get());
  if (!utf8) {
    PyErr_Clear();
    return "";
  }
  return utf8;
}

}  // namespace

PythonLock::PythonLock() : state_(static_cast<int>(PyGILState_Ensure())) {}
PythonLock::~PythonLock() { PyGILState_Release(static_cast<PyGILState_STATE>(state_)); }

PyRef PyRef::borrow(PyObject* borrowed) {
  Py_XINCREF(borrowed);
  return PyRef(borrowed);
}

PyRef& PyRef::operator=(PyRef&& other) noexcept {
  if (this != &other) {
    Py_XDECREF(object_);
    object_ = std::exchange(other.object_, nullptr);
  }
  return *this;
}

PyRef::~PyRef() { Py_XDECREF(object_); }

std::string python_program() {
  if (const char* chosen = std::getenv("DRK_PYTHON"); chosen && *chosen) return chosen;
  return DRK_PYTHON_EXECUTABLE;
}

Result<std::vector<std::string>> python_search_path(const std::string& program) {
  const std::string command =
      "'" + program + "' -c 'import json, sys; print(json.dumps(sys.path[1:]))' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return make_error(Errc::unsupported, "cannot run the Python program '" + program + "'");
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) output.append(buffer, n);
  const int status = pclose(pipe.release());
  const auto fix = " (set DRK_PYTHON to a Python " + std::to_string(PY_MAJOR_VERSION) + "." +
                   std::to_string(PY_MINOR_VERSION) + " with torch, the version drkernel was built against)";
  if (status != 0) return make_error(Errc::unsupported, "the Python program '" + program + "' failed: " + output + fix);
  const auto parsed = nlohmann::json::parse(output, nullptr, false);
  if (!parsed.is_array()) return make_error(Errc::unsupported, "'" + program + "' printed no search path" + fix);
  return parsed.get<std::vector<std::string>>();
}

Status start_python(const std::vector<std::string>& search_path, const std::vector<std::string>& modules,
                    bool keep_lock) {
  std::lock_guard lock(start_mutex);
  if (started) return {};
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.module_search_paths_set = 1;
  // The embedded interpreter leaves signals to the process: the sandbox's deadlines are signals.
  config.install_signal_handlers = 0;
  config.site_import = 1;
  PyStatus status = PyStatus_Ok();
  for (const auto& path : search_path) {
    std::unique_ptr<wchar_t, void (*)(void*)> wide(Py_DecodeLocale(path.c_str(), nullptr), PyMem_RawFree);
    status = PyWideStringList_Append(&config.module_search_paths, wide.get());
    if (PyStatus_Exception(status)) break;
  }
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status))
    return make_error(Errc::unsupported, std::string("the embedded Python did not start: ") +
                                             (status.err_msg ? status.err_msg : "unknown reason"));
  started = true;
  Status imported;
  for (const auto& name : modules) {
    PyRef module(PyImport_ImportModule(name.c_str()));
    if (!module) {
      imported = make_error(Errc::unsupported, "the embedded Python cannot import " + name + ": " + python_error_text() +
                                                   " (its search path is that of " + python_program() +
                                                   "; set DRK_PYTHON to a Python with torch)");
      break;
    }
  }
  // The thread that started it holds the GIL: other threads take it with PythonLock.
  if (!keep_lock) PyEval_SaveThread();
  return imported;
}

const char* python_version() { return PY_VERSION; }

void python_before_fork() { PyOS_BeforeFork(); }
void python_after_fork_in_parent() { PyOS_AfterFork_Parent(); }
void python_after_fork_in_child() { PyOS_AfterFork_Child(); }

bool python_started() {
  std::lock_guard lock(start_mutex);
  return started;
}

std::string python_error_text(const std::string& file_name) {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  if (!type) return "no Python exception";
  PyErr_NormalizeException(&type, &value, &traceback);
  PyRef owned_type(type), owned_value(value), owned_traceback(traceback);
  std::string text = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  const std::string message = text_of(value);
  if (!message.empty()) text += ": " + message;
  // The lines of the named file, innermost last: where in the candidate it went wrong.
  std::string where;
  for (PyObject* frame = traceback; frame && !file_name.empty();) {
    PyRef frame_object(PyObject_GetAttrString(frame, "tb_frame"));
    PyRef line(PyObject_GetAttrString(frame, "tb_lineno"));
    PyRef f_code(frame_object ? PyObject_GetAttrString(frame_object.get(), "f_code") : nullptr);
    PyRef filename(f_code ? PyObject_GetAttrString(f_code.get(), "co_filename") : nullptr);
    if (!line || !filename) break;
    if (text_of(filename.get()) == file_name) where = file_name + ", line " + text_of(line.get());
    PyRef next(PyObject_GetAttrString(frame, "tb_next"));
    frame = next.get() == Py_None ? nullptr : next.get();
  }
  PyErr_Clear();
  return where.empty() ? text : text + " (" + where + ")";
}

Result<PyRef> run_module(const std::string& source, const std::string& module_name, const std::string& file_name) {
  PyRef code(Py_CompileString(source.c_str(), file_name.c_str(), Py_file_input));
  if (!code) return make_error(Errc::invalid_argument, python_error_text(file_name));
  PyRef module(PyModule_New(module_name.c_str()));
  if (!module) return make_error(Errc::internal, python_error_text());
  // The source in linecache under the file's name, as if read from it: inspect.getsource() finds
  // it there (Triton's @jit reads its kernels' source so), and tracebacks show its lines.
  PyRef linecache(PyImport_ImportModule("linecache"));
  PyRef cache(linecache ? PyObject_GetAttrString(linecache.get(), "cache") : nullptr);
  PyRef text(PyUnicode_FromStringAndSize(source.data(), static_cast<Py_ssize_t>(source.size())));
  PyRef lines(text ? PyObject_CallMethod(text.get(), "splitlines", "O", Py_True) : nullptr);
  PyRef entry(lines ? Py_BuildValue("(nOOs)", static_cast<Py_ssize_t>(source.size()), Py_None, lines.get(),
                                    file_name.c_str())
                    : nullptr);
  if (!cache || !entry || PyObject_SetItem(cache.get(), PyRef(PyUnicode_FromString(file_name.c_str())).get(), entry.get()) != 0)
    return make_error(Errc::internal, "cannot enter " + file_name + " into linecache: " + python_error_text());
  PyObject* globals = PyModule_GetDict(module.get());  // borrowed
  PyRef file(PyUnicode_FromString(file_name.c_str()));
  PyDict_SetItemString(globals, "__file__", file.get());
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyRef result(PyEval_EvalCode(code.get(), globals, globals));
  if (!result) return make_error(Errc::invalid_argument, python_error_text(file_name));
  return module;
}

std::unique_lock<std::mutex> hold_torch_generators() {
  static std::mutex generators;
  return std::unique_lock(generators);
}

Status seed_torch(uint64_t seed) {
  PyRef torch(PyImport_ImportModule("torch"));
  if (!torch) return make_error(Errc::unsupported, "cannot import torch: " + python_error_text());
  // KernelBench's seeds are ints that fit torch's generator (it takes any 64-bit value).
  PyRef result(PyObject_CallMethod(torch.get(), "manual_seed", "K", static_cast<unsigned long long>(seed)));
  if (!result) return make_error(Errc::internal, "torch.manual_seed failed: " + python_error_text());
  return {};
}

Result<std::string> parameter_summary(PyObject* model) {
  static PyObject* summarise = [] {
    PyRef globals(PyDict_New());
    PyDict_SetItemString(globals.get(), "__builtins__", PyEval_GetBuiltins());
    return PyRun_String(
        "lambda model: __import__('json').dumps([[list(p.shape), float(p.detach().double().sum())] "
        "for p in model.parameters()])",
        Py_eval_input, globals.get(), globals.get());
  }();
  if (!summarise) return make_error(Errc::internal, python_error_text());
  PyRef text(PyObject_CallOneArg(summarise, model));
  if (!text) return make_error(Errc::invalid_argument, "its parameters cannot be read: " + python_error_text());
  return std::string(PyUnicode_AsUTF8(text.get()));
}

Result<PyRef> python_from_json(const std::string& json_text) {
  PyRef json(PyImport_ImportModule("json"));
  if (!json) return make_error(Errc::internal, python_error_text());
  PyRef value(PyObject_CallMethod(json.get(), "loads", "s", json_text.c_str()));
  if (!value) return make_error(Errc::invalid_argument, "'" + json_text + "' is no JSON value: " + python_error_text());
  return value;
}

}  // namespace drk::evaluator
