#include "tools/drk/remeasure.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <filesystem>
#include <vector>

#include <capnp/message.h>
#include <yaml-cpp/yaml.h>

#include "actors/archivist/archive.h"
#include "actors/evaluator/evaluation.h"
#include "actors/evaluator/evaluator_actor.h"
#include "kernels/catalog/task.h"
#include "runtime/progress_meter.h"
#include "tools/bench/statistics.h"

namespace drk::tools {
namespace {

Result<YAML::Node> run_experiment(const std::string& run_dir) {
  const std::string path = run_dir + "/topology.yaml";
  if (!std::filesystem::exists(path))
    return make_error(Errc::not_found, path + " does not exist: re-measure the directory of a run `drk run` made");
  try {
    return YAML::LoadFile(path)["experiment"];
  } catch (const YAML::Exception& e) {
    return make_error(Errc::parse_error, path + ": " + e.msg);
  }
}

}  // namespace

uint32_t configured_remeasure_times(const std::string& run_dir) {
  auto experiment = run_experiment(run_dir);
  if (!experiment || !*experiment || !(*experiment)["remeasure"]) return 0;
  try {
    return (*experiment)["remeasure"].as<uint32_t>();
  } catch (const YAML::Exception&) {
    return 0;
  }
}

Status remeasure_best_kernels(const std::string& run_dir, uint32_t times, std::ostream& out) {
  if (times == 0) return make_error(Errc::invalid_argument, "re-measure at least once (--times N, N >= 1)");
  auto experiment = run_experiment(run_dir);
  if (!experiment) return experiment.error();
  auto archive = archivist::Archive::open(archivist::Archive::default_path(run_dir));
  if (!archive) return archive.error();
  auto best = archive->best_per_task();
  if (!best) return best.error();

  runtime::ActorSpec spec;
  spec.name = "remeasure";
  spec.role = "evaluator";
  spec.experiment = *experiment;
  spec.run_dir = run_dir;
  auto options = evaluator::engine_options_for(spec);
  if (!options) return options.error();
  std::string tasks_dir = kernels::TaskCatalog::default_directory();
  if (*experiment && (*experiment)["tasks_dir"]) tasks_dir = (*experiment)["tasks_dir"].as<std::string>();
  auto catalog = kernels::TaskCatalog::load(tasks_dir);
  if (!catalog) return catalog.error();
  auto engine = evaluator::EvaluationEngine::create(std::move(*catalog), *options);
  if (!engine) return engine.error();

  char line[256];
  std::snprintf(line, sizeof line, "%-28s %10s %12s %12s %12s %12s  %s\n", "task", "run best", "re-measured",
                "low-high", "kernel us", "reference us", "evaluations");
  out << "\nre-measuring the best kernel of each task " << times << " times\n" << line;
  runtime::ProgressMeter progress("drk archive remeasure", "evaluations", best->size() * times, &std::cerr,
                                  runtime::stderr_progress_options());
  for (const auto& kernel : *best) {
    auto source = archive->source_of(kernel.candidate_id);
    if (!source) return source.error();
    std::vector<double> speedups, candidate_us, reference_us;
    for (uint32_t i = 0; i < times; ++i) {
      capnp::MallocMessageBuilder message;
      auto result = message.initRoot<msg::EvalResult>();
      evaluator::CandidateInput input{kernel.candidate_id + "/remeasure/" + std::to_string(i), kernel.task,
                                      options->device, *source};
      if (auto status = (*engine)->evaluate(input, result); !status) return status;
      progress.add_done();
      if (!result.getCorrect()) continue;
      speedups.push_back(result.getSpeedup());
      candidate_us.push_back(result.getCandidateTiming().getMedianUs());
      reference_us.push_back(result.getReferenceTiming().getMedianUs());
    }
    archivist::Remeasured row;
    row.task = kernel.task;
    row.candidate_id = kernel.candidate_id;
    row.evaluations = static_cast<uint32_t>(speedups.size());
    row.speedup = bench::median(speedups);
    row.candidate_us = bench::median(candidate_us);
    row.reference_us = bench::median(reference_us);
    if (!speedups.empty()) {
      row.speedup_low = *std::min_element(speedups.begin(), speedups.end());
      row.speedup_high = *std::max_element(speedups.begin(), speedups.end());
    }
    if (auto status = archive->record_remeasured(row); !status) return status;
    char range[48];
    std::snprintf(range, sizeof range, "%.2f-%.2f", row.speedup_low, row.speedup_high);
    std::snprintf(line, sizeof line, "%-28s %9.2fx %11.2fx %12s %12.1f %12.1f  %u of %u correct\n", row.task.c_str(),
                  kernel.speedup, row.speedup, range, row.candidate_us, row.reference_us, row.evaluations, times);
    progress.note(out, line);
  }
  return {};
}

}  // namespace drk::tools
