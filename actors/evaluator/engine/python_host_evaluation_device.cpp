#include "actors/evaluator/engine/python_host_evaluation_device.h"

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/python/python_reference.h"
#include "actors/evaluator/python/python_runtime.h"

namespace drk::evaluator {

Result<std::unique_ptr<EvaluationDevice>> PythonHostEvaluationDevice::create() {
  auto search_path = python_search_path(python_program());
  if (!search_path) return search_path.error();
  if (auto started = start_python(*search_path, {"torch"}); !started) return started.error();
  return std::unique_ptr<EvaluationDevice>(new PythonHostEvaluationDevice(std::move(*search_path)));
}

void PythonHostEvaluationDevice::configure_sandbox(EngineOptions& options) const {
  HostEvaluationDevice::configure_sandbox(options);
  std::string joined;
  for (const auto& path : search_path_) joined += (joined.empty() ? "" : ":") + path;
  options.sandbox.program_arguments = {"--python", "--python-path", joined};
}

void PythonHostEvaluationDevice::describe_reference(kernels::ReferenceBuild& build) const {
  build.libtorch += " through Python " + std::string(python_version());
}

}  // namespace drk::evaluator

namespace drk::evaluator {

void PythonHostEvaluationDevice::fill_load(const EvaluationRun& run, msg::LoadRequest::Builder load) const {
  const auto& reference = dynamic_cast<const PythonReference&>(*run.reference);
  auto python = load.initPython();
  python.setDisplayName("candidate.py");
  python.setInitInputs(reference.init_inputs_json());
  python.setInitSeed(reference.init_seed());
  python.setConstants(reference.constants_json());
  python.setParameters(reference.parameters_json());
}

}  // namespace drk::evaluator
