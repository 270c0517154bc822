#include "actors/evaluator/cuda/python_cuda_evaluation_device.h"

#include "actors/evaluator/engine/bounds_check.h"
#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/python_evaluation.h"
#include "actors/evaluator/python/python_runtime.h"

namespace drk::evaluator::cuda {

Result<std::unique_ptr<EvaluationDevice>> PythonCudaEvaluationDevice::create(const EngineOptions& options) {
  auto search_path = start_evaluator_python();
  if (!search_path) return search_path.error();
  return std::unique_ptr<EvaluationDevice>(new PythonCudaEvaluationDevice(options, std::move(*search_path)));
}

void PythonCudaEvaluationDevice::configure_sandbox(EngineOptions& options) const {
  CudaEvaluationDevice::configure_sandbox(options);
  options.sandbox.program_arguments = python_sandbox_arguments(search_path_);
}

void PythonCudaEvaluationDevice::describe_reference(kernels::ReferenceBuild& build) const {
  CudaEvaluationDevice::describe_reference(build);
  build.libtorch += " through Python " + std::string(python_version());
}

void PythonCudaEvaluationDevice::fill_load(const EvaluationRun& run, msg::LoadRequest::Builder load) const {
  fill_python_load(run, load);
}

// memcheck only: a Python candidate's answer is a tensor it allocates, so no output is left
// unwritten for initcheck to watch.
void PythonCudaEvaluationDevice::check_bounds(BoundsCheck& check, EvaluationRun& run,
                                              const compile::CompiledCandidate& compiled) const {
  check.sanitizer(run, compiled, false);
}

}  // namespace drk::evaluator::cuda
