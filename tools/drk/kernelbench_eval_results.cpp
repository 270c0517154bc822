#include "tools/drk/kernelbench_eval_results.h"

#include <algorithm>

#include "messages/enumerant_name.h"
#include "tools/drk/commands.h"
#include "tools/drk/judged_evaluation.h"

namespace drk::tools {
namespace {

double ms_or_unmeasured(msg::TimingStats::Reader timing) {
  return timing.getSamples() > 0 ? timing.getMedianUs() / 1000.0 : -1.0;
}

Json timing_stats(msg::TimingStats::Reader timing) {
  if (timing.getSamples() == 0) return Json::object();
  return Json{{"median", timing.getMedianUs() / 1000.0}, {"p10", timing.getP10Us() / 1000.0},
              {"p90", timing.getP90Us() / 1000.0},       {"cv", timing.getCv()},
              {"num_trials", timing.getSamples()},         {"calls_per_trial", timing.getCallsPerSample()}};
}

Json checks(capnp::List<msg::FailedCheck>::Reader list) {
  Json out = Json::array();
  for (auto check : list) out.push_back({{"code", check.getCode().cStr()}, {"evidence", check.getEvidence().cStr()}});
  return out;
}

Json entry(int sample_id, bool compiled, bool correct, Json metadata) {
  return Json{{"sample_id", sample_id},         {"compiled", compiled},   {"correctness", correct},
              {"metadata", std::move(metadata)}, {"runtime", -1.0},       {"runtime_stats", Json::object()},
              {"ref_runtime", -1.0},             {"ref_runtime_stats", Json::object()}};
}

std::string first_line(std::string text) {
  text = text.substr(0, text.find('\n'));
  constexpr size_t kKeep = 160;
  return text.size() > kKeep ? text.substr(0, kKeep) + "..." : text;
}

}  // namespace

Json kernelbench_result_entry(int sample_id, const std::string& task, msg::Verdict::Reader verdict, bool reference) {
  auto result = verdict.getResult();
  const bool loaded = result.getCompiled() && result.getSandbox() != msg::SandboxOutcome::FAILED_TO_LOAD;
  const bool correct = result.getCorrect() && (reference || verdict.getHonest());
  Json metadata;
  const bool cuda = result.getCandidate().getDevice() == msg::Device::CUDA;
  metadata["hardware"] = result.hasGpu() ? std::string(result.getGpu().getDevice().cStr()) : (cuda ? "cuda" : "cpu");
  metadata["device"] = cuda ? "cuda" : "cpu";
  const std::string error = result.getErrorText().cStr();
  if (!result.getCompiled()) {
    metadata["compilation_error"] = result.getCompileLog().cStr();
  } else if (!loaded) {
    metadata["compilation_error"] = error;
  } else {
    metadata["correctness_trials"] =
        "(" + std::to_string(result.getTrialsPassed()) + " / " + std::to_string(result.getTrials()) + ")";
    if (result.getSandbox() != msg::SandboxOutcome::OK)
      metadata["runtime_error"] = error.empty() ? std::string("the sandbox ") + sandbox_outcome_name(result.getSandbox())
                                                : error;
    else if (!result.getCorrect())
      metadata["correctness_issue"] = error.empty() ? std::string("Output mismatch") : error;
    else if (!verdict.getHonest() && !reference)
      metadata["correctness_issue"] = "the outputs matched, but drkernel's checks rejected the candidate";
  }
  Json drk{{"task", task},
           {"verdict", verdict.getHonest() ? "honest" : "rejected"},
           {"failed_checks", checks(verdict.getFailedChecks())},
           {"warnings", checks(verdict.getWarnings())},
           {"outputs_correct", result.getCorrect()},
           {"speedup", result.getSpeedup()},
           {"sandbox", sandbox_outcome_name(result.getSandbox())},
           {"max_abs_error", result.getMaxAbsError()},
           {"max_rel_error", result.getMaxRelError()},
           {"widened_atol", result.getWidenedAtol()},
           {"reference_build", result.getReferenceBuild().cStr()},
           {"architecture", result.getArchitecture().cStr()},
           {"dtype", msg::enumerant_name(result.getDtype())},
           {"eval_ms", result.getEvalMs()},
           // Where eval_ms went; the rest is setting up the reference and the verdict.
           {"phases_ms", Json{{"compile_wait", result.getCompileWaitMs()},
                              {"load", result.getLoadMs()},
                              {"correctness", result.getCorrectnessMs()},
                              {"timing", result.getTimingMs()}}}};
  metadata["drk"] = std::move(drk);
  Json out = entry(sample_id, loaded, correct, std::move(metadata));
  out["runtime"] = ms_or_unmeasured(result.getCandidateTiming());
  out["runtime_stats"] = timing_stats(result.getCandidateTiming());
  out["ref_runtime"] = ms_or_unmeasured(result.getReferenceTiming());
  out["ref_runtime_stats"] = timing_stats(result.getReferenceTiming());
  return out;
}

Json kernelbench_unevaluated_entry(int sample_id, const std::string& task, const std::string& reason) {
  return entry(sample_id, false, false,
               Json{{"other_error", "error: " + reason}, {"drk", Json{{"task", task}, {"verdict", "not evaluated"}}}});
}

ScoredSample scored_sample(int level, int problem_id, const Json& entry) {
  ScoredSample sample;
  sample.level = level;
  sample.problem_id = problem_id;
  sample.sample_id = entry.value("sample_id", 0);
  sample.compiled = entry.value("compiled", false);
  sample.correct = entry.value("correctness", false);
  sample.speedup = entry["metadata"]["drk"].value("speedup", 0.0);
  return sample;
}

std::string kernelbench_entry_summary(const Json& entry) {
  const Json& metadata = entry["metadata"];
  const Json& drk = metadata["drk"];
  if (entry.value("correctness", false)) return "correct, " + fixed(drk.value("speedup", 0.0), 3) + "x";
  for (const char* key : {"other_error", "compilation_error", "runtime_error", "correctness_issue"}) {
    if (!metadata.contains(key)) continue;
    const std::string what = std::string(key) == "other_error"         ? "not evaluated"
                             : std::string(key) == "compilation_error" ? "does not compile or load"
                             : std::string(key) == "runtime_error"     ? "fails when run"
                                                                       : "not correct";
    std::string text = metadata[key].get<std::string>();
    if (text.rfind("error: ", 0) == 0) text.erase(0, 7);  // KernelBench's prefix of other_error
    return what + ": " + first_line(text);
  }
  return "not correct";
}

std::string kernelbench_results_text(const std::map<int, std::vector<Json>>& entries_by_problem) {
  Json file = Json::object();
  for (const auto& [problem_id, entries] : entries_by_problem) {
    std::vector<Json> sorted = entries;
    std::sort(sorted.begin(), sorted.end(),
              [](const Json& a, const Json& b) { return a.value("sample_id", 0) < b.value("sample_id", 0); });
    file[std::to_string(problem_id)] = sorted;
  }
  return json_text(file, 4) + "\n";
}

}  // namespace drk::tools
