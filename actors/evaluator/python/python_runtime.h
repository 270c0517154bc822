// The CPython interpreter embedded in this process: in the Evaluator it runs the trusted reference
// of a KernelBench problem (python_reference.h), in drk-sandbox --python the candidate's ModelNew
// (python_candidate.h). Its torch is the LibTorch this process already links (Debian's
// python3-torch on CPU machines, pip's torch on the GPU machine), so tensors cross between C++ and
// Python without a copy (python_tensors.h).
//
// The interpreter's module search path is the one of the Python program the user runs
// (python_program(): $DRK_PYTHON, else the interpreter found when drkernel was built), read from
// it once (python_search_path()), so that its site-packages (torch, triton) are found.
//
// Thread-safety: start_python() once per process, from any thread; afterwards every use of the
// interpreter holds a PythonLock (the GIL). PyRef is an owned reference, used under the lock.
// Errors: start_python() returns unavailable with Python's own message when the interpreter
// cannot start; python_error_text() turns the raised exception into text (and clears it).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace drk::evaluator {

// The Python program whose environment the interpreter takes: $DRK_PYTHON, else the build's.
std::string python_program();
// `program`'s sys.path (without the script directory), by running it once.
Result<std::vector<std::string>> python_search_path(const std::string& program);

// Starts the interpreter with `search_path` and imports `modules`; a second call is a no-op.
// Afterwards the calling thread releases the GIL, unless `keep_lock` (a single-threaded process
// that forks, the sandbox's zygote: a fork needs the GIL held by the forking thread).
Status start_python(const std::vector<std::string>& search_path, const std::vector<std::string>& modules,
                    bool keep_lock = false);
bool python_started();
// "3.11.2": the embedded interpreter's version.
const char* python_version();

// Around a fork by the thread that holds the GIL (PyOS_BeforeFork and its two afters).
void python_before_fork();
void python_after_fork_in_parent();
void python_after_fork_in_child();

// Python.h stays out of this header: it must come before every other header of a unit.
using PyObject = struct _object;

// Holds the GIL for its scope.
class PythonLock {
 public:
  PythonLock();
  ~PythonLock();
  PythonLock(const PythonLock&) = delete;
  PythonLock& operator=(const PythonLock&) = delete;

 private:
  int state_;
};

// An owned reference (a new reference handed over, or borrowed and taken with PyRef::borrow).
class PyRef {
 public:
  PyRef() = default;
  explicit PyRef(PyObject* owned) : object_(owned) {}
  static PyRef borrow(PyObject* borrowed);
  PyRef(PyRef&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  PyRef& operator=(PyRef&& other) noexcept;
  PyRef(const PyRef& other) = delete;
  PyRef& operator=(const PyRef& other) = delete;
  ~PyRef();

  PyObject* get() const { return object_; }
  PyObject* release() { return std::exchange(object_, nullptr); }
  explicit operator bool() const { return object_ != nullptr; }

 private:
  PyObject* object_ = nullptr;
};

// The exception being raised, as "TypeError: message" with the last frames of its traceback that
// lie in `file_name` (the candidate's or the problem's source) when given; clears it.
std::string python_error_text(const std::string& file_name = "");

// Runs `source` as the body of a fresh module named `module_name` whose __file__ is `file_name`;
// the module, or the exception's text.
Result<PyRef> run_module(const std::string& source, const std::string& module_name, const std::string& file_name);

// torch.manual_seed(seed) (CPU and every CUDA device), as KernelBench seeds before each model.
Status seed_torch(uint64_t seed);

// Torch keeps one generator per device for the whole process, and its operators let go of the GIL
// while they run: a seed and the draws that depend on it (threads of one process evaluating at
// once) hold this lock from the seed to the last draw, taken before the PythonLock.
std::unique_lock<std::mutex> hold_torch_generators();

// `model.parameters()` in order, as JSON [[shape, sum], ...] (the sum in float64): what the
// check that ModelNew starts from Model's weights compares.
Result<std::string> parameter_summary(PyObject* model);

// `json_text` as Python values (json.loads).
Result<PyRef> python_from_json(const std::string& json_text);

}  // namespace drk::evaluator
