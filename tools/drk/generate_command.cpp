// drk generate: test-time scaling with a trained policy (actors/generator/refinement_search.h):
// the policy of a run directory writes kernels for one task in refinement iterations, each
// evaluated by the Evaluator's engine and judged by the Verifier and the Oracle's reward, and
// the best verified one of all is written out.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <capnp/message.h>
#include <yaml-cpp/yaml.h>

#include "actors/evaluator/evaluation.h"
#include "actors/generator/refinement_search.h"
#include "actors/oracle/reward.h"
#include "actors/verifier/verify.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

constexpr const char* kGenerateHelp = R"(usage: drk generate RUN_DIR --task NAME [options]

Test-time scaling: the newest policy checkpoint of RUN_DIR (written by `drk run`) writes kernels
for one task. The first iteration samples WINDOW x SAMPLES schedules; each later one edits each
of the WINDOW best attempts so far SAMPLES times, the policy seeing it and its feedback as the
previous turn. Every attempt is compiled, run in a sandbox against the task's LibTorch
reference, timed and judged by the Verifier, as in training. The answer is the best verified
attempt of all iterations (correct, honest, fastest), not the last one.

options:
  --task NAME        the task (`drk tasks` lists them)
  --device cpu|cuda  the device the policy was trained for (default cpu)
  --iterations N     refinement iterations (default 4)
  --window N         attempts kept and edited from one iteration to the next (default 2)
  --samples N        edits of each kept attempt per iteration (default 2)
  --seed N           sampling seed (default 1)
  --temperature T    divides the policy's logits (default 2: a trained policy is sharp, and at
                     1 its samples mostly repeat; training samples at 1)
  --out FILE         write the best verified kernel's source there
  --trials N         correctness trials per attempt (default 5)
  --budget-ms MS     timing budget per attempt (default 200)
  --threads N        threads a candidate and the reference may use (default 1)
  --cache-dir DIR    compile cache (default $DRK_CACHE_DIR, else ~/.cache/drk/compile-cache)

Exit status: 0 when a verified kernel was found, 1 when none was (or the run directory holds no
policy, or the engine failed), 2 for a usage error.
)";

}  // namespace

int cmd_generate(const Args& args) {
  std::string run_dir, task_name, out_file, device_text = "cpu", cache_dir = default_compile_cache_dir();
  generator::SearchOptions search;
  evaluator::EngineOptions options;
  options.timing_budget_ms = 200;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "--help" || arg == "-h") {
      std::cout << kGenerateHelp;
      return 0;
    } else if (arg == "--task" && has_value) {
      task_name = args[++i];
    } else if (arg == "--device" && has_value) {
      device_text = args[++i];
    } else if (arg == "--out" && has_value) {
      out_file = args[++i];
    } else if (arg == "--cache-dir" && has_value) {
      cache_dir = args[++i];
    } else if (arg == "--iterations" || arg == "--window" || arg == "--samples" || arg == "--seed" ||
               arg == "--trials" || arg == "--threads") {
      auto value = number_argument(args, i, "drk generate", arg == "--seed" ? 0 : 1);
      if (!value) return 2;
      const int whole = static_cast<int>(*value);
      if (arg == "--iterations") search.iterations = whole;
      if (arg == "--window") search.window = whole;
      if (arg == "--samples") search.samples = whole;
      if (arg == "--seed") search.seed = static_cast<uint64_t>(*value);
      if (arg == "--trials") options.trials = static_cast<uint32_t>(whole);
      if (arg == "--threads") options.max_threads = whole;
    } else if (arg == "--budget-ms") {
      auto value = number_argument(args, i, "drk generate", 0);
      if (!value) return 2;
      options.timing_budget_ms = *value;
    } else if (arg == "--temperature") {
      auto value = number_argument(args, i, "drk generate", 0.01);
      if (!value) return 2;
      search.temperature = *value;
    } else if (arg.rfind("--", 0) != 0 && run_dir.empty()) {
      run_dir = arg;
    } else {
      std::cerr << "drk generate: unexpected argument '" << arg << "'\n" << kGenerateHelp;
      return 2;
    }
  }
  if (run_dir.empty() || task_name.empty()) {
    std::cerr << "drk generate: RUN_DIR and --task are required\n" << kGenerateHelp;
    return 2;
  }
  auto device = kernels::parse_device(device_text);
  if (!device) {
    std::cerr << "drk generate: --device: " << device.error().message << "\n";
    return 2;
  }
  auto state = schedule::read_checkpoint_state(run_dir);
  if (!state || !*state) {
    std::cerr << "drk generate: " << (state ? "'" + run_dir + "' holds no policy checkpoint (" +
                                                  schedule::policy_directory(run_dir) +
                                                  "): train one first with drk run"
                                            : state.error().message)
              << "\n";
    return 1;
  }
  auto bytes = schedule::read_policy_version(run_dir, (*state)->version);
  const auto schedule_device = *device == kernels::DeviceKind::cuda ? schedule::Device::cuda : schedule::Device::cpu;
  schedule::Policy policy(search.seed, schedule_device);
  if (!bytes) {
    std::cerr << "drk generate: " << bytes.error().message << "\n";
    return 1;
  }
  if (auto loaded = policy.load(*bytes); !loaded) {
    std::cerr << "drk generate: policy v" << (*state)->version << " of " << run_dir << ": " << loaded.error().message
              << " (is --device the run's experiment.device?)\n";
    return 1;
  }
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) {
    std::cerr << "drk generate: " << catalog.error().message << "\n";
    return 1;
  }
  auto task = catalog->find(task_name);
  if (!task) {
    std::cerr << "drk generate: " << task.error().message << "\n";
    return 1;
  }
  if (!(*task)->runs_on(*device)) {
    std::cerr << "drk generate: task '" << task_name << "' has no " << device_text << " shapes: it runs on "
              << (*task)->devices_text() << " only\n";
    return 1;
  }
  capnp::MallocMessageBuilder task_message;
  kernels::fill_task_message(**task, *device, task_message.initRoot<msg::Task>());
  auto problem = schedule::problem_from_task(task_message.getRoot<msg::Task>().asReader());
  if (!problem) {
    std::cerr << "drk generate: " << problem.error().message << "\n";
    return 1;
  }
  YAML::Node experiment;
  experiment["device"] = device_text;
  auto weights = oracle::reward_weights_from(experiment);
  if (!weights) {
    std::cerr << "drk generate: " << weights.error().message << "\n";
    return 1;
  }
  options.device = *device;
  options.cache_dir = cache_dir;
  options.evaluator_name = "drk generate";
  auto engine = evaluator::EvaluationEngine::create(std::move(*catalog), options);
  if (!engine) {
    std::cerr << "drk generate: " << engine.error().message << "\n";
    return 1;
  }
  std::cout << "drk generate: policy v" << (*state)->version << " of " << run_dir << ", task " << task_name << " on "
            << device_text << ": " << search.iterations << " iterations, window " << search.window << ", "
            << search.samples << " samples, temperature " << fixed(search.temperature, 2) << "\n";
  size_t evaluated = 0;
  auto evaluate = [&](const schedule::Choice&, const std::string& source) -> Result<generator::Outcome> {
    capnp::MallocMessageBuilder result_message;
    auto result = result_message.initRoot<msg::EvalResult>();
    const evaluator::CandidateInput input{"generate/" + task_name + "/" + std::to_string(evaluated++), task_name,
                                          *device, source};
    if (auto status = (*engine)->evaluate(input, result); !status) return status.error();
    capnp::MallocMessageBuilder verdict_message;
    auto verdict = verdict_message.initRoot<msg::Verdict>();
    verifier::verify(result.asReader(), verdict);
    if (!verdict.hasResult()) verdict.setResult(result.asReader());
    const double coverage = *device == kernels::DeviceKind::cuda ? result.getGpu().getCoverage() : 1.0;
    generator::Outcome outcome;
    outcome.compiled = result.getCompiled();
    outcome.correct = result.getCorrect();
    outcome.honest = verdict.getHonest();
    outcome.speedup = result.getSpeedup();
    outcome.reward = oracle::reward(*weights, verdict.asReader(), coverage);
    if (!outcome.compiled) outcome.summary = "does not compile";
    else if (!outcome.correct) outcome.summary = "wrong: " + std::string(result.getErrorText().cStr());
    else if (!outcome.honest)
      outcome.summary = "rejected" + (verdict.getFailedChecks().size() > 0
                                          ? ": " + std::string(verdict.getFailedChecks()[0].getCode().cStr())
                                          : std::string());
    else outcome.summary = fixed(result.getCandidateTiming().getMedianUs(), 1) + " us";
    return outcome;
  };
  auto found = generator::refine(policy, *problem, search, evaluate);
  if (!found) {
    std::cerr << "drk generate: " << found.error().message << "\n";
    return 1;
  }
  for (size_t index = 0; index < found->attempts.size(); ++index) {
    const auto& attempt = found->attempts[index];
    std::cout << "  #" << index << " iteration " << attempt.iteration
              << (attempt.parent ? " (edits #" + std::to_string(*attempt.parent) + ")" : std::string()) << "  "
              << attempt.choice.describe() << "  speedup " << fixed(attempt.outcome.speedup, 2) << "x  reward "
              << fixed(attempt.outcome.reward, 3) << "  " << attempt.outcome.summary << "\n";
  }
  std::cout << found->attempts.size() << " attempts (" << found->repeated << " schedules sampled again, not re-run)\n";
  if (!found->best) {
    std::cout << "no verified kernel\n";
    return 1;
  }
  const auto& best = found->attempts[*found->best];
  std::cout << "best verified: #" << *found->best << " (iteration " << best.iteration << ") "
            << best.choice.describe() << ", speedup " << fixed(best.outcome.speedup, 2) << "x\n";
  if (!out_file.empty()) {
    std::ofstream out(out_file, std::ios::binary);
    out << best.source;
    if (!out) {
      std::cerr << "drk generate: cannot write " << out_file << "\n";
      return 1;
    }
    std::cout << "written to " << out_file << "\n";
  }
  return 0;
}

}  // namespace drk::tools
