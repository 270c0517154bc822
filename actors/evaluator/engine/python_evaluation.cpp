#include "actors/evaluator/engine/python_evaluation.h"

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/python/python_reference.h"
#include "actors/evaluator/python/python_runtime.h"

namespace drk::evaluator {

Result<std::vector<std::string>> start_evaluator_python() {
  auto search_path = python_search_path(python_program());
  if (!search_path) return search_path.error();
  if (auto started = start_python(*search_path, {"torch"}); !started) return started.error();
  return search_path;
}

std::vector<std::string> python_sandbox_arguments(const std::vector<std::string>& search_path) {
  std::string joined;
  for (const auto& path : search_path) joined += (joined.empty() ? "" : ":") + path;
  return {"--python", "--python-path", joined};
}

void fill_python_load(const EvaluationRun& run, msg::LoadRequest::Builder load) {
  const auto& reference = dynamic_cast<const PythonReference&>(*run.reference);
  auto python = load.initPython();
  python.setDisplayName("candidate.py");
  python.setInitInputs(reference.init_inputs_json());
  python.setInitSeed(reference.init_seed());
  python.setConstants(reference.constants_json());
  python.setParameters(reference.parameters_json());
  python.setReferenceSource(reference.source());
}

}  // namespace drk::evaluator
