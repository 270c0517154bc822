#include "tools/gateway/evaluation_result.h"

#include <string_view>

#include "judging/feedback_report.h"
#include "messages/enumerant_name.h"

namespace drk::gateway {
namespace {

// The Verifier's checks that say a candidate failed (crashed, hung, raised, did not load) rather
// than cheated (actors/verifier/verify.h); every other failed check is evidence of a hack.
bool is_plain_failure(std::string_view code) {
  return code == "sandbox_crashed" || code == "sandbox_timeout" || code == "candidate_error" ||
         code == "failed_to_load";
}

// Compiled, and rejected for a hack: a check beyond the plain failures failed, whether the
// candidate ran to the end or the sandbox refused the call that gave it away.
bool is_decoy(msg::Verdict::Reader verdict) {
  if (!verdict.getResult().getCompiled()) return false;
  for (auto check : verdict.getFailedChecks())
    if (!is_plain_failure(check.getCode().cStr())) return true;
  return false;
}

std::string error_code_of(msg::Verdict::Reader verdict) {
  const auto result = verdict.getResult();
  if (!result.getCompiled()) return "compilation_error";
  if (is_decoy(verdict)) return "decoy_kernel";
  if (result.getSandbox() == msg::SandboxOutcome::TIMED_OUT) return "timeout";
  if (result.getSandbox() != msg::SandboxOutcome::OK) return "runtime_error";
  if (!verdict.getHonest()) return "runtime_error";
  if (!result.getCorrect()) return "correctness_error";
  return "";
}

Json checks_json(capnp::List<msg::FailedCheck>::Reader checks) {
  Json list = Json::array();
  for (auto check : checks) list.push_back({{"code", check.getCode().cStr()}, {"evidence", check.getEvidence().cStr()}});
  return list;
}

Json common_fields(const EvaluateRequest& request, double processing_seconds, const oracle::RewardWeights& weights) {
  return Json{{"task_id", request.task_id},
              {"backend", std::string(judging::backend_name(request.backend))},
              {"processing_time", processing_seconds},
              {"reward_formula", reward_formula_json(weights)}};
}

}  // namespace

Json reward_formula_json(const oracle::RewardWeights& weights) {
  return Json{{"formula",
               "0 unless compiled, honest and correct; else correct + speedup * min(speedup, speedup_cap) + "
               "coverage * coverage_fraction + memory * 1/(1 + held_mb/memory_scale_mb) + energy * "
               "min(energy_ratio, energy_cap) + convergence * convergence_ratio, times 1 - shapes * (1 - "
               "(1 + shapes_handled) / (1 + shapes_tried)) where the task has a shape range (its drawn and timed "
               "shapes); where it declares timed shapes, speedup is shapes_speedup, the geometric mean over the "
               "task's shape and the timed shapes handled"},
              {"weights",
               {{"correct", weights.correct},
                {"speedup", weights.speedup},
                {"speedup_cap", weights.speedup_cap},
                {"coverage", weights.coverage},
                {"memory", weights.memory},
                {"memory_scale_mb", weights.memory_scale_mb},
                {"energy", weights.energy},
                {"energy_cap", weights.energy_cap},
                {"convergence", weights.convergence},
                {"shapes", weights.shapes}}}};
}

Json evaluated_result(const EvaluateRequest& request, msg::Verdict::Reader verdict,
                      const oracle::RewardWeights& weights, double processing_seconds) {
  const auto result = verdict.getResult();
  // As the Oracle: CPU candidates' time is all their own, CUDA ones' is CUPTI's share.
  const double coverage =
      result.getCandidate().getDevice() == msg::Device::CUDA ? result.getGpu().getCoverage() : 1.0;
  const double value = oracle::reward(weights, verdict, coverage);
  const std::string error_code = error_code_of(verdict);
  Json answer = common_fields(request, processing_seconds, weights);
  answer["status"] = "completed";
  answer["compiled"] = result.getCompiled();
  answer["correctness"] = result.getCorrect() && verdict.getHonest();
  answer["decoy_kernel"] = is_decoy(verdict);
  answer["reference_runtime"] = result.getReferenceTiming().getMedianUs() / 1000.0;
  answer["kernel_runtime"] = result.getCandidateTiming().getMedianUs() / 1000.0;
  answer["speedup"] = verdict.getHonest() ? result.getSpeedup() : 0.0;
  answer["error_code"] = error_code.empty() ? Json() : Json(error_code);
  answer["error_message"] = result.getCompiled() ? result.getErrorText().cStr() : result.getCompileLog().cStr();
  answer["reward"] = value;
  answer["metadata"] = {{"verdict", verdict.getHonest() ? "honest" : "rejected"},
                        {"failed_checks", checks_json(verdict.getFailedChecks())},
                        {"warnings", checks_json(verdict.getWarnings())},
                        {"feedback", judging::feedback_report(verdict, value)},
                        {"coverage", coverage},
                        {"trials", result.getTrials()},
                        {"trials_passed", result.getTrialsPassed()},
                        {"max_abs_error", result.getMaxAbsError()},
                        {"max_rel_error", result.getMaxRelError()},
                        {"widened_atol", result.getWidenedAtol()},
                        {"reference_build", result.getReferenceBuild().cStr()},
                        {"evaluator", result.getEvaluator().cStr()},
                        {"device", msg::enumerant_name(result.getDevice())},
                        {"architecture", result.getArchitecture().cStr()},
                        {"dtype", msg::enumerant_name(result.getDtype())},
                        {"eval_ms", result.getEvalMs()},
                        {"requested", requested_knobs_json(request)}};
  if (result.getTimedShapes().size() > 0) {
    Json timed = Json::array();
    for (auto shape : result.getTimedShapes())
      timed.push_back({{"shapes", shape.getShapes().cStr()},
                       {"declined", shape.getDeclined()},
                       {"kernel_runtime", shape.getCandidateTiming().getMedianUs() / 1000.0},
                       {"reference_runtime", shape.getReferenceTiming().getMedianUs() / 1000.0},
                       {"speedup", shape.getSpeedup()}});
    answer["metadata"]["timed_shapes"] = std::move(timed);
    answer["metadata"]["shapes_speedup"] = verdict.getHonest() ? result.getShapesSpeedup() : 0.0;
  }
  return answer;
}

Json failed_result(const EvaluateRequest& request, const std::string& error_code, const std::string& message,
                   const oracle::RewardWeights& weights, double processing_seconds) {
  Json answer = common_fields(request, processing_seconds, weights);
  answer["status"] = "failed";
  answer["compiled"] = false;
  answer["correctness"] = false;
  answer["decoy_kernel"] = false;
  answer["reference_runtime"] = 0.0;
  answer["kernel_runtime"] = 0.0;
  answer["speedup"] = 0.0;
  answer["error_code"] = error_code;
  answer["error_message"] = message;
  answer["reward"] = 0.0;
  answer["metadata"] = {{"verdict", "not evaluated"}, {"failed_checks", Json::array()},
                        {"feedback", "status=not_evaluated; error=\"" + message + "\""},
                        {"requested", requested_knobs_json(request)}};
  return answer;
}

}  // namespace drk::gateway
