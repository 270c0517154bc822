// What the evaluation devices of KernelBench-format Python candidates share, on the CPU
// (python_host_evaluation_device.h) and on CUDA (cuda/python_cuda_evaluation_device.h): this
// process's interpreter, the sandbox's arguments, and the Python part of the load request.
//
// Thread-safety: start_evaluator_python() from any thread (the interpreter starts once); the
// others are pure. Errors: start_evaluator_python() returns unsupported, naming the fix, when the
// Python program or its torch cannot be used.
#pragma once

#include <string>
#include <vector>

#include "actors/evaluator/engine/evaluation_device.h"
#include "base/result.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

class EvaluationRun;

// The module search path of python_program(), with this process's interpreter started on it
// (torch imported); the sandboxes' interpreters take the same path.
Result<std::vector<std::string>> start_evaluator_python();

// drk-sandbox --python (and drk-sandbox-cuda --python) with `search_path`.
std::vector<std::string> python_sandbox_arguments(const std::vector<std::string>& search_path);

// The problem's init inputs, init seed, plain arguments, parameters and file (whose Model the
// sandbox builds as the timing reference beside the candidate), from the run's PythonReference.
void fill_python_load(const EvaluationRun& run, msg::LoadRequest::Builder load);

}  // namespace drk::evaluator
