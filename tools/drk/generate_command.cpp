// drk generate: test-time scaling with a trained policy (actors/generator/refinement_search.h):
// the policy of a run directory writes kernels for one task in refinement iterations, each
// evaluated by the Evaluator's engine and judged by the Verifier and the Oracle's reward, and
// the best verified one of all is written out.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <capnp/message.h>
#include <yaml-cpp/yaml.h>

#include "actors/evaluator/evaluation.h"
#include "actors/generator/refinement_search.h"
#include "actors/oracle/reward.h"
#include "actors/verifier/verify.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"

namespace drk::tools {
namespace {

// What `drk generate` was asked.
struct GenerateArgs {
  std::string run_dir;
  std::string task_name;
  std::string out_file;
  generator::SearchOptions search;
  evaluator::EngineOptions options;
};

int generate(const GenerateArgs& args) {
  const std::string& run_dir = args.run_dir;
  const std::string& task_name = args.task_name;
  const std::string& out_file = args.out_file;
  const generator::SearchOptions& search = args.search;
  evaluator::EngineOptions options = args.options;
  const kernels::DeviceKind device = options.device;
  const std::string device_text(kernels::device_name(device));
  auto state = schedule::read_checkpoint_state(run_dir);
  if (!state || !*state) {
    log::error() << "drk generate: " << (state ? "'" + run_dir + "' holds no policy checkpoint (" +
                                                     schedule::policy_directory(run_dir) +
                                                     "): train one first with drk run"
                                               : state.error().message);
    return 1;
  }
  auto bytes = schedule::read_policy_version(run_dir, (*state)->version);
  const auto schedule_device = device == kernels::DeviceKind::cuda ? schedule::Device::cuda : schedule::Device::cpu;
  schedule::Policy policy(search.seed, schedule_device);
  if (!bytes) {
    log::error() << "drk generate: " << bytes.error().message;
    return 1;
  }
  if (auto loaded = policy.load(*bytes); !loaded) {
    log::error() << "drk generate: policy v" << (*state)->version << " of " << run_dir << ": " << loaded.error().message
                 << " (is --device the run's experiment.device?)";
    return 1;
  }
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) {
    log::error() << "drk generate: " << catalog.error().message;
    return 1;
  }
  auto task = catalog->find(task_name);
  if (!task) {
    log::error() << "drk generate: " << task.error().message;
    return 1;
  }
  if (!(*task)->runs_on(device)) {
    log::error() << "drk generate: task '" << task_name << "' has no " << device_text << " shapes: it runs on "
                 << (*task)->devices_text() << " only";
    return 1;
  }
  capnp::MallocMessageBuilder task_message;
  kernels::fill_task_message(**task, device, task_message.initRoot<msg::Task>());
  auto problem = schedule::problem_from_task(task_message.getRoot<msg::Task>().asReader());
  if (!problem) {
    log::error() << "drk generate: " << problem.error().message;
    return 1;
  }
  YAML::Node experiment;
  experiment["device"] = device_text;
  auto weights = oracle::reward_weights_from(experiment);
  if (!weights) {
    log::error() << "drk generate: " << weights.error().message;
    return 1;
  }
  options.evaluator_name = "drk generate";
  auto engine = evaluator::EvaluationEngine::create(std::move(*catalog), options);
  if (!engine) {
    log::error() << "drk generate: " << engine.error().message;
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
                                          device, source};
    if (auto status = (*engine)->evaluate(input, result); !status) return status.error();
    capnp::MallocMessageBuilder verdict_message;
    auto verdict = verdict_message.initRoot<msg::Verdict>();
    verifier::verify(result.asReader(), verdict);
    if (!verdict.hasResult()) verdict.setResult(result.asReader());
    const double coverage = device == kernels::DeviceKind::cuda ? result.getGpu().getCoverage() : 1.0;
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
    log::error() << "drk generate: " << found.error().message;
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
      log::error() << "drk generate: cannot write " << out_file;
      return 1;
    }
    std::cout << "written to " << out_file << "\n";
  }
  return 0;
}

}  // namespace

void add_generate_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<GenerateArgs>();
  generator::SearchOptions& search = args->search;
  evaluator::EngineOptions& options = args->options;
  options.timing_budget_ms = 200;
  CLI::App* generate_command = drk.add_subcommand(
      "generate",
      "test-time scaling: the run's trained policy refines kernels for one task and writes the best\n"
      "\n"
      "The newest policy checkpoint of RUN_DIR (written by `drk run`) writes kernels for one task\n"
      "in refinement iterations. The first iteration samples WINDOW x SAMPLES schedules; each later\n"
      "one edits each of the WINDOW best attempts so far SAMPLES times, the policy seeing it and its\n"
      "feedback as the previous turn. Every attempt is compiled, run in a sandbox against the task's LibTorch\n"
      "reference, timed and judged by the Verifier, as in training. The answer is the best verified\n"
      "attempt of all iterations (correct, honest, fastest), not the last one.");
  generate_command->add_option("RUN_DIR", args->run_dir, "a run directory of `drk run`")->required()->type_name("");
  generate_command->add_option("--task", args->task_name, "the task (`drk tasks` lists them)")
      ->required()
      ->type_name("NAME");
  add_device_option(*generate_command, "--device", options.device,
                    "the device the policy was trained for (default cpu)");
  generate_command->add_option("--iterations", search.iterations, "refinement iterations (default 4)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  generate_command
      ->add_option("--window", search.window, "attempts kept and edited from one iteration to the next (default 2)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  generate_command->add_option("--samples", search.samples, "edits of each kept attempt per iteration (default 2)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  generate_command->add_option("--seed", search.seed, "sampling seed (default 1)")->type_name("N");
  generate_command
      ->add_option("--temperature", search.temperature,
                   "divides the policy's logits (default 2: a trained policy is sharp, and at\n"
                   "1 its samples mostly repeat; training samples at 1)")
      ->type_name("T")
      ->check(runtime::at_least(0.01));
  generate_command->add_option("--out", args->out_file, "write the best verified kernel's source there")
      ->type_name("FILE");
  add_engine_options(*generate_command, options, /*memory_limit=*/false);
  generate_command->footer(
      "Exit status: 0 when a verified kernel was found, 1 when none was (or the run directory holds no\n"
      "policy, or the engine failed); a usage error exits with CLI11's code (105 a refused value, 106 a\n"
      "missing argument, 109 an unknown one).");
  actions[generate_command] = [args] { return generate(*args); };
}

}  // namespace drk::tools
