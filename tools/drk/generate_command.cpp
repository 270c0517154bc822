// drk generate: test-time scaling. A generator writes kernels for one task in refinement
// iterations, each evaluated by the Evaluator's engine and judged by the Verifier and the
// Oracle's reward, and the best verified one of all is written out. The generator is the trained
// policy of a run directory (actors/generator/refinement_search.h), or the language model of an
// experiment whose generator.backend is openai (actors/generator/llm_refinement_search.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <capnp/message.h>
#include <yaml-cpp/yaml.h>

#include "actors/evaluator/evaluation.h"
#include "actors/generator/llm/llm_settings.h"
#include "actors/generator/llm/openai_client.h"
#include "actors/generator/llm/prompt_templates.h"
#include "actors/generator/llm/task_brief.h"
#include "actors/generator/llm_refinement_search.h"
#include "actors/generator/refinement_search.h"
#include "actors/oracle/reward.h"
#include "actors/verifier/verify.h"
#include "judging/feedback_report.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/topology/topology.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"
#include "tools/drk/cuda_device_count.h"

namespace drk::tools {
namespace {

// What `drk generate` was asked.
struct GenerateArgs {
  std::string source;  // a run directory, or a topology file
  std::vector<std::string> overrides;
  std::string task_name;
  std::string out_file;
  std::optional<kernels::DeviceKind> device;
  generator::SearchOptions search;
  evaluator::EngineOptions options;
};

int fail(const std::string& message) {
  log::error() << "drk generate: " << message;
  return 1;
}

// The experiment `drk generate` works for: the topology file given, or the one `drk run` wrote
// into the run directory given (none for a directory without one), with the --set overrides.
struct Experiment {
  std::string run_dir;
  std::optional<YAML::Node> experiment;
};

Result<Experiment> read_experiment(const GenerateArgs& args) {
  const bool file = std::filesystem::is_regular_file(args.source);
  const std::string topology_path = file ? args.source : args.source + "/topology.yaml";
  if (!std::filesystem::is_regular_file(topology_path)) {
    if (!args.overrides.empty())
      return make_error(Errc::invalid_argument, "--set: '" + args.source +
                                                    "' holds no topology.yaml to apply it to: give a topology file");
    return Experiment{args.source, std::nullopt};
  }
  auto topology = runtime::load_topology(topology_path, args.overrides, this_machine_gpus());
  if (!topology) return topology.error();
  return Experiment{file ? topology->run_dir : args.source, topology->experiment};
}

// What both generators share: the task, the engine, and the judging of one candidate.
struct Evaluation {
  kernels::DeviceKind device;
  std::string task_name;
  capnp::MallocMessageBuilder task_message;
  std::unique_ptr<evaluator::EvaluationEngine> engine;
  oracle::RewardWeights weights;
  size_t evaluated = 0;

  msg::Task::Reader task() { return task_message.getRoot<msg::Task>().asReader(); }

  Result<generator::Outcome> evaluate(const std::string& source) {
    capnp::MallocMessageBuilder result_message;
    auto result = result_message.initRoot<msg::EvalResult>();
    const evaluator::CandidateInput input{"generate/" + task_name + "/" + std::to_string(evaluated++), task_name,
                                          device, source};
    if (auto status = engine->evaluate(input, result); !status) return status.error();
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
    outcome.reward = oracle::reward(weights, verdict.asReader(), coverage);
    outcome.report = judging::feedback_report(verdict.asReader(), outcome.reward);
    if (!outcome.compiled) outcome.summary = "does not compile";
    else if (!outcome.correct) outcome.summary = "wrong: " + std::string(result.getErrorText().cStr());
    else if (!outcome.honest)
      outcome.summary = "rejected" + (verdict.getFailedChecks().size() > 0
                                          ? ": " + std::string(verdict.getFailedChecks()[0].getCode().cStr())
                                          : std::string());
    else outcome.summary = fixed(result.getCandidateTiming().getMedianUs(), 1) + " us";
    return outcome;
  }
};

Result<std::unique_ptr<Evaluation>> prepare_evaluation(const GenerateArgs& args, const YAML::Node& experiment,
                                                       kernels::DeviceKind device) {
  auto evaluation = std::make_unique<Evaluation>();
  evaluation->device = device;
  evaluation->task_name = args.task_name;
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) return catalog.error();
  auto task = catalog->find(args.task_name);
  if (!task) return task.error();
  if (!(*task)->runs_on(device))
    return make_error(Errc::invalid_argument, "task '" + args.task_name + "' has no " +
                                                  std::string(kernels::device_name(device)) + " shapes: it runs on " +
                                                  (*task)->devices_text() + " only");
  kernels::fill_task_message(**task, device, evaluation->task_message.initRoot<msg::Task>());
  auto weights = oracle::reward_weights_from(experiment);
  if (!weights) return weights.error();
  evaluation->weights = *weights;
  evaluator::EngineOptions options = args.options;
  options.device = device;
  options.evaluator_name = "drk generate";
  auto engine = evaluator::EvaluationEngine::create(std::move(*catalog), options);
  if (!engine) return engine.error();
  evaluation->engine = std::move(*engine);
  return evaluation;
}

// The attempts, one a line, and the best verified one, written to --out; `describe` says what
// an attempt was (its schedule, or the model's answer).
template <typename AttemptType>
int report(const GenerateArgs& args, const generator::SearchResultOf<AttemptType>& found,
           const std::function<std::string(const AttemptType&)>& describe, const std::string& repeated_what) {
  for (size_t index = 0; index < found.attempts.size(); ++index) {
    const auto& attempt = found.attempts[index];
    std::cout << "  #" << index << " iteration " << attempt.iteration
              << (attempt.parent ? " (edits #" + std::to_string(*attempt.parent) + ")" : std::string()) << "  "
              << describe(attempt) << "  speedup " << fixed(attempt.outcome.speedup, 2) << "x  reward "
              << fixed(attempt.outcome.reward, 3) << "  " << attempt.outcome.summary << "\n";
  }
  std::cout << found.attempts.size() << " attempts (" << found.repeated << " " << repeated_what
            << " sampled again, not re-run)\n";
  if (!found.best) {
    std::cout << "no verified kernel\n";
    return 1;
  }
  const auto& best = found.attempts[*found.best];
  std::cout << "best verified: #" << *found.best << " (iteration " << best.iteration << ") " << describe(best)
            << ", speedup " << fixed(best.outcome.speedup, 2) << "x\n";
  if (!args.out_file.empty()) {
    std::ofstream out(args.out_file, std::ios::binary);
    out << best.source;
    if (!out) return fail("cannot write " + args.out_file);
    std::cout << "written to " << args.out_file << "\n";
  }
  return 0;
}

int generate_with_policy(const GenerateArgs& args, const std::string& run_dir, const YAML::Node& experiment,
                         kernels::DeviceKind device) {
  const generator::SearchOptions& search = args.search;
  auto state = schedule::read_checkpoint_state(run_dir);
  if (!state || !*state)
    return fail(state ? "'" + run_dir + "' holds no policy checkpoint (" + schedule::policy_directory(run_dir) +
                            "): train one first with drk run"
                      : state.error().message);
  auto bytes = schedule::read_policy_version(run_dir, (*state)->version);
  if (!bytes) return fail(bytes.error().message);
  schedule::Policy policy(search.seed, device == kernels::DeviceKind::cuda ? schedule::Device::cuda : schedule::Device::cpu);
  if (auto loaded = policy.load(*bytes); !loaded)
    return fail("policy v" + std::to_string((*state)->version) + " of " + run_dir + ": " + loaded.error().message +
                " (is --device the run's experiment.device?)");
  auto evaluation = prepare_evaluation(args, experiment, device);
  if (!evaluation) return fail(evaluation.error().message);
  auto problem = schedule::problem_from_task((*evaluation)->task());
  if (!problem) return fail(problem.error().message);
  std::cout << "drk generate: policy v" << (*state)->version << " of " << run_dir << ", task " << args.task_name
            << " on " << kernels::device_name(device) << ": " << search.iterations << " iterations, window "
            << search.window << ", " << search.samples << " samples, temperature " << fixed(search.temperature, 2)
            << "\n";
  auto found = generator::refine(policy, *problem, search, [&](const schedule::Choice&, const std::string& source) {
    return (*evaluation)->evaluate(source);
  });
  if (!found) return fail(found.error().message);
  return report<generator::Attempt>(
      args, *found, [](const generator::Attempt& attempt) { return attempt.choice.describe(); }, "schedules");
}

int generate_with_model(const GenerateArgs& args, const YAML::Node& experiment, kernels::DeviceKind device) {
  auto settings = generator::llm_settings(experiment);
  if (!settings) return fail(settings.error().message);
  auto templates = generator::load_prompt_templates(settings->prompts_dir);
  if (!templates) return fail("experiment.generator.prompts_dir: " + templates.error().message);
  auto key = generator::load_api_key(*settings);
  if (!key) return fail(key.error().message);
  auto evaluation = prepare_evaluation(args, experiment, device);
  if (!evaluation) return fail(evaluation.error().message);
  auto brief = generator::task_brief((*evaluation)->task(), settings->kernelbench_backend);
  if (!brief) return fail(brief.error().message);
  const generator::SearchOptions& search = args.search;
  std::cout << "drk generate: model " << settings->sampling.model << " at " << settings->endpoint.base() << ", task "
            << args.task_name << " on " << kernels::device_name(device) << ": " << search.iterations
            << " iterations, window " << search.window << ", " << search.samples << " samples, temperature "
            << fixed(settings->sampling.temperature, 2) << "\n";
  generator::OpenAiClient client(*settings, std::move(*key));
  auto found = generator::refine_with_model({client, settings->sampling, *templates, *brief}, search,
                                            [&](const std::string& source) { return (*evaluation)->evaluate(source); });
  if (!found) return fail(found.error().message);
  return report<generator::LlmAttempt>(
      args, *found,
      [](const generator::LlmAttempt& attempt) {
        return attempt.source.empty() ? std::string("answer without a candidate")
                                      : "answer of " + std::to_string(std::count(attempt.source.begin(), attempt.source.end(), '\n')) + " lines";
      },
      "candidates");
}

int generate(const GenerateArgs& args) {
  auto read = read_experiment(args);
  if (!read) return fail(read.error().message);
  // Without a topology, the experiment is the defaults on --device (the reward's weights).
  YAML::Node experiment = read->experiment ? *read->experiment : YAML::Node(YAML::NodeType::Map);
  kernels::DeviceKind device = kernels::DeviceKind::cpu;
  if (args.device) {
    device = *args.device;
  } else if (const YAML::Node named = experiment["device"]; named && named.IsScalar()) {
    auto parsed = kernels::parse_device(named.Scalar());
    if (!parsed) return fail("experiment.device: " + parsed.error().message);
    device = *parsed;
  }
  experiment["device"] = std::string(kernels::device_name(device));
  if (generator::uses_llm_backend(experiment)) return generate_with_model(args, experiment, device);
  return generate_with_policy(args, read->run_dir, experiment, device);
}

}  // namespace

void add_generate_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<GenerateArgs>();
  generator::SearchOptions& search = args->search;
  evaluator::EngineOptions& options = args->options;
  options.timing_budget_ms = 200;
  CLI::App* generate_command = drk.add_subcommand(
      "generate",
      "test-time scaling: a trained policy or a language model refines kernels for one task and writes the best\n"
      "\n"
      "SOURCE is a run directory of `drk run`, whose newest policy checkpoint writes the kernels, or\n"
      "a topology file of `drk run` (or the run directory of one) whose experiment.generator.backend\n"
      "is openai: its language model writes them, asked as the LLM Generator asks it\n"
      "(docs/llm-generator.md). Refinement iterations: the first samples WINDOW x SAMPLES kernels;\n"
      "each later one edits each of the WINDOW best attempts so far SAMPLES times, the generator\n"
      "seeing it and its feedback as the previous turn. Every attempt is compiled, run in a sandbox\n"
      "against the task's LibTorch reference, timed and judged by the Verifier, as in training. The\n"
      "answer is the best verified attempt of all iterations (correct, honest, fastest), not the last one.");
  generate_command
      ->add_option("SOURCE", args->source, "a run directory of `drk run`, or a topology file with a language model")
      ->required()
      ->type_name("");
  generate_command->add_option("--set", args->overrides, "override a key of the topology (key=value)")
      ->type_name("KEY=VALUE");
  generate_command->add_option("--task", args->task_name, "the task (`drk tasks` lists them)")
      ->required()
      ->type_name("NAME");
  add_device_option(*generate_command, "--device", args->device,
                    "the device to generate for (default the experiment's device, else cpu; a policy's\n"
                    "is the one it was trained for)");
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
  generate_command->add_option("--seed", search.seed, "the policy's sampling seed (default 1; a language model's:\n"
                               "experiment.generator.seed)")->type_name("N");
  generate_command
      ->add_option("--temperature", search.temperature,
                   "divides the policy's logits (default 2: a trained policy is sharp, and at\n"
                   "1 its samples mostly repeat; training samples at 1). A language model's:\n"
                   "experiment.generator.temperature")
      ->type_name("T")
      ->check(runtime::at_least(0.01));
  generate_command->add_option("--out", args->out_file, "write the best verified kernel's source there")
      ->type_name("FILE");
  add_engine_options(*generate_command, options, /*memory_limit=*/false);
  generate_command->footer(
      "Exit status: 0 when a verified kernel was found, 1 when none was (or the run directory holds no\n"
      "policy, the model's server gave no answer, or the engine failed); a usage error exits with\n"
      "CLI11's code (105 a refused value, 106 a missing argument, 109 an unknown one).");
  actions[generate_command] = [args] { return generate(*args); };
}

}  // namespace drk::tools
