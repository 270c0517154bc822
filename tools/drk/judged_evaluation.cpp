#include "tools/drk/judged_evaluation.h"

#include <capnp/message.h>

#include "actors/verifier/verify.h"
#include "kernels/catalog/task.h"

namespace drk::tools {

Result<std::unique_ptr<evaluator::EvaluationEngine>> make_engine(const evaluator::EngineOptions& options) {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) return catalog.error();
  return evaluator::EvaluationEngine::create(std::move(*catalog), options);
}

Status evaluate_and_judge(evaluator::EvaluationEngine& engine, const evaluator::CandidateInput& input,
                          msg::Verdict::Builder verdict) {
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<msg::EvalResult>();
  if (auto status = engine.evaluate(input, result); !status) return status;
  verifier::verify(result.asReader(), verdict);
  if (!verdict.hasResult()) verdict.setResult(result.asReader());
  return {};
}

const char* sandbox_outcome_name(msg::SandboxOutcome outcome) {
  switch (outcome) {
    case msg::SandboxOutcome::OK: return "ok";
    case msg::SandboxOutcome::CRASHED: return "crashed";
    case msg::SandboxOutcome::TIMED_OUT: return "timed out";
    case msg::SandboxOutcome::FAILED_TO_LOAD: return "failed to load";
    case msg::SandboxOutcome::RETURNED_ERROR: return "returned an error";
  }
  return "unknown";
}

}  // namespace drk::tools
