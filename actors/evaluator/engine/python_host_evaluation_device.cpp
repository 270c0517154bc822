#include "actors/evaluator/engine/python_host_evaluation_device.h"

#include "actors/evaluator/engine/cpu_timer.h"
#include "actors/evaluator/engine/python_evaluation.h"
#include "actors/evaluator/python/python_runtime.h"

namespace drk::evaluator {

Result<std::unique_ptr<EvaluationDevice>> PythonHostEvaluationDevice::create() {
  auto search_path = start_evaluator_python();
  if (!search_path) return search_path.error();
  return std::unique_ptr<EvaluationDevice>(new PythonHostEvaluationDevice(std::move(*search_path)));
}

void PythonHostEvaluationDevice::configure_sandbox(EngineOptions& options) const {
  HostEvaluationDevice::configure_sandbox(options);
  options.sandbox.program_arguments = python_sandbox_arguments(search_path_);
}

void PythonHostEvaluationDevice::describe_reference(kernels::ReferenceBuild& build) const {
  build.libtorch += " through Python " + std::string(python_version());
}

void PythonHostEvaluationDevice::fill_load(const EvaluationRun& run, msg::LoadRequest::Builder load) const {
  fill_python_load(run, load);
}

std::unique_ptr<Timer> PythonHostEvaluationDevice::make_timer(SandboxSession& session, const EngineOptions& options,
                                                              uint64_t order_seed) const {
  return std::make_unique<CpuTimer>(session, options, order_seed, true);
}

}  // namespace drk::evaluator
