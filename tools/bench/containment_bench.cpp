#include "tools/bench/containment_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <capnp/message.h>

#include "actors/evaluator/evaluation.h"
#include "actors/verifier/verify.h"
#include "runtime/log.h"
#include "tools/bench/source_tree.h"
#include "tools/bench/statistics.h"
#include "tools/bench/temp_dir.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kHostile[] = {"fork_bomb.cpp", "memory_bomb.cpp", "spins_child_to_slow_reference.cpp",
                                    "spins_thread_to_slow_reference.cpp"};

struct Outcome {
  bool evaluated = false;
  bool correct = false;
  double candidate_us = 0, reference_us = 0, speedup = 0, eval_ms = 0;
  std::string failed;  // the Verifier's failed checks, comma-separated
};

Outcome evaluate(evaluator::EvaluationEngine& engine, const std::string& task, const std::string& name,
                 const std::string& source) {
  capnp::MallocMessageBuilder message, verdict_message;
  auto result = message.initRoot<msg::EvalResult>();
  Outcome outcome;
  if (!engine.evaluate(evaluator::CandidateInput{"containment/" + name, task, kernels::DeviceKind::cpu, source}, result))
    return outcome;
  auto verdict = verdict_message.initRoot<msg::Verdict>();
  verifier::verify(result.asReader(), verdict);
  outcome.evaluated = true;
  outcome.correct = result.getCorrect();
  outcome.candidate_us = result.getCandidateTiming().getMedianUs();
  outcome.reference_us = result.getReferenceTiming().getMedianUs();
  outcome.speedup = result.getSpeedup();
  outcome.eval_ms = result.getEvalMs();
  for (auto check : verdict.getFailedChecks())
    outcome.failed += (outcome.failed.empty() ? "" : ",") + std::string(check.getCode().cStr());
  return outcome;
}

struct Honest {
  std::vector<double> candidate_us, reference_us;
  bool all_correct = true;
  void add(const Outcome& outcome) {
    all_correct = all_correct && outcome.correct;
    candidate_us.push_back(outcome.candidate_us);
    reference_us.push_back(outcome.reference_us);
  }
};

}  // namespace

int run_containment_bench(const ContainmentBenchOptions& options, std::ostream& out) {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) {
    log::error() << "drk bench containment: " << catalog.error().message;
    return 1;
  }
  const TemporaryDirectory cache = temp_dir("drk-bench-containment");
  evaluator::EngineOptions engine_options;
  engine_options.trials = 3;
  engine_options.timing_budget_ms = 300;
  engine_options.max_threads = 1;
  engine_options.sandbox.memory_bytes = options.memory_bytes;
  engine_options.cache_dir = cache.path();
  auto make = [&](const char* name) {
    auto options_of_engine = engine_options;
    options_of_engine.evaluator_name = name;
    return evaluator::EvaluationEngine::create(*catalog, options_of_engine);
  };
  auto honest_engine = make("honest");
  auto hostile_engine = make("hostile");
  if (!honest_engine || !hostile_engine) {
    log::error() << "drk bench containment: cannot make the engines: "
                 << (!honest_engine ? honest_engine.error().message : hostile_engine.error().message);
    return 1;
  }
  const auto relu = read_source_file("tests/candidates/relu.cpp");
  if (!relu) {
    log::error() << "drk bench containment: cannot read tests/candidates/relu.cpp under " << source_dir()
                 << ": set DRK_SOURCE_DIR to the drkernel source tree";
    return 1;
  }
  Honest alone;
  for (uint32_t i = 0; i < options.honest_evaluations; ++i) alone.add(evaluate(**honest_engine, "relu", "alone", *relu));
  if (!alone.all_correct) {
    log::error() << "drk bench containment: the honest candidate was not correct alone";
    return 1;
  }
  const double alone_us = median(alone.candidate_us), alone_reference_us = median(alone.reference_us);
  out << "drk bench containment: an honest relu (1 thread) alone and beside each hostile candidate, "
      << options.honest_evaluations << "+ evaluations each; sandbox memory budget " << (options.memory_bytes >> 20)
      << " MiB\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-36s %-44s %9s %12s %12s\n", "hostile candidate", "outcome (failed checks)",
                "its ms", "honest x", "reference x");
  out << line;
  std::snprintf(line, sizeof line, "%-36s %-44s %9s %12.1f %12.1f   (us, alone)\n", "(none)", "-", "-", alone_us,
                alone_reference_us);
  out << line;
  bool honest_correct = true;
  for (const char* file : kHostile) {
    std::atomic<bool> done{false};
    Outcome hostile;
    std::thread attacker([&] {
      hostile = evaluate(**hostile_engine, "relu", file,
                         read_source_file(std::string("tests/hacks/") + file).value_or(""));
      done = true;
    });
    Honest beside;
    while (!done || beside.candidate_us.size() < options.honest_evaluations)
      beside.add(evaluate(**honest_engine, "relu", "beside", *relu));
    attacker.join();
    honest_correct = honest_correct && beside.all_correct;
    std::snprintf(line, sizeof line, "%-36s %-44s %9.0f %12.3f %12.3f\n", file,
                  hostile.evaluated ? (hostile.failed.empty() ? "honest" : hostile.failed).c_str() : "not evaluated",
                  hostile.eval_ms, median(beside.candidate_us) / alone_us,
                  median(beside.reference_us) / alone_reference_us);
    out << line;
  }
  out << "\nhonest x / reference x: the honest candidate's and its reference's median time beside the hostile "
         "evaluation over alone (1.0: not slowed)\n";
  if (!honest_correct) {
    log::error() << "drk bench containment: the honest candidate was not correct beside a hostile one";
    return 1;
  }
  return 0;
}

}  // namespace drk::bench
