#include "tools/drk/run_summary.h"

#include <cstdio>

#include <iostream>

#include "actors/archivist/archive.h"
#include "runtime/log.h"
#include "tools/drk/remeasure.h"

namespace drk::tools {
int print_run_summary(const std::string& run_dir) {
  const auto path = archivist::Archive::default_path(run_dir);
  auto archive = archivist::Archive::open(path, /*read_only=*/true);
  if (!archive) {
    log::error() << "drk: " << archive.error().message;
    return 1;
  }
  auto steps = archive->steps();
  auto best = archive->best_per_task();
  auto tallies = archive->tallies();
  auto remeasured = archive->remeasured();
  if (!steps || !best || !tallies || !remeasured) {
    const Error& error = !steps ? steps.error() : !best ? best.error() : !tallies ? tallies.error() : remeasured.error();
    log::error() << "drk: " << error.message;
    return 1;
  }

  std::printf("\n== summary ==\n");
  if (steps->empty()) {
    std::printf("no training step was recorded\n");
  } else {
    double seconds = 0;
    for (const auto& step : *steps) seconds += step.seconds;
    std::printf("steps: %zu (%.0f s of training)\n", steps->size(), seconds);
    std::printf("mean reward: first step %.3f -> last step %.3f\n", steps->front().mean_reward,
                steps->back().mean_reward);
  }
  // "vs median": the best kernel's time against the task's median reference time, which one
  // slow reference measurement cannot inflate; "re-measured": the median of its evaluations
  // after the run (`drk archive remeasure`), when there are any (docs/archive.md).
  const bool with_remeasured = !remeasured->empty();
  std::printf("\n%-28s %-20s %10s %12s %12s %10s%s %9s  %s\n", "task", "judged on", "best", "kernel us",
              "reference us", "vs median", with_remeasured ? " re-measured" : "", "verified", "candidate");
  for (const auto& tally : *tallies) {
    char verified[32];
    std::snprintf(verified, sizeof verified, "%u/%u", tally.verified, tally.candidates);
    bool any = false;
    // One line per device, architecture and dtype the task's best kernels were judged on.
    for (const auto& found : *best) {
      if (found.task != tally.task) continue;
      any = true;
      char again[32] = "";
      if (with_remeasured) {
        std::snprintf(again, sizeof again, " %11s", "-");
        for (const auto& row : *remeasured)
          if (row.task == tally.task && row.candidate_id == found.candidate_id)
            std::snprintf(again, sizeof again, " %10.2fx", row.speedup);
      }
      const double robust = archivist::speedup_vs_median(tally, found);
      char over_shapes[48] = "";
      if (found.shapes_speedup > 0)
        std::snprintf(over_shapes, sizeof over_shapes, "  (%.2fx over its timed shapes)", found.shapes_speedup);
      std::printf("%-28s %-20s %9.2fx %12.1f %12.1f %9.2fx%s %9s  %s%s\n", tally.task.c_str(),
                  archivist::judged_on(found).c_str(), found.speedup, found.candidate_us, found.reference_us, robust,
                  again, verified, found.candidate_id.c_str(), over_shapes);
    }
    if (!any)
      std::printf("%-28s %-20s %10s %12s %12s %10s%s %9s\n", tally.task.c_str(), "-", "none", "-", "-", "-",
                  with_remeasured ? "           -" : "", verified);
  }
  if (const archivist::SuiteScores scores = archivist::suite_scores(*tallies, *best); scores.tasks > 0) {
    const archivist::SuiteScores robust = archivist::suite_scores(*tallies, *best, /*against_median=*/true);
    std::printf("\nFast@1.0: %u of %u tasks, Fast@1.2: %u of %u; geometric mean of the best speedups %.2fx (over "
                "the %u tasks with a verified kernel)\n",
                scores.fast_1_0, scores.tasks, scores.fast_1_2, scores.tasks, scores.geomean_speedup, scores.verified);
    std::printf("vs median: Fast@1.0: %u of %u, Fast@1.2: %u of %u; geometric mean %.2fx\n", robust.fast_1_0,
                robust.tasks, robust.fast_1_2, robust.tasks, robust.geomean_speedup);
  }
  if (const archivist::OtherShapes shapes = archivist::other_shapes(*tallies); shapes.tried > 0)
    std::printf("\nhard-coded-shape rate: %.1f %% (%u of the %u candidates tried at other shapes declined or got "
                "one wrong)\n",
                100.0 * shapes.hardcoded / shapes.tried, shapes.hardcoded, shapes.tried);
  std::printf("\narchive: %s\n", path.c_str());
  std::printf("  drk archive best %s          best kernel per task\n", run_dir.c_str());
  std::printf("  drk archive show %s ID       one candidate's source\n", run_dir.c_str());
  return 0;
}

int finish_run(const std::string& run_dir) {
  if (const uint32_t times = configured_remeasure_times(run_dir); times > 0) {
    if (auto status = remeasure_best_kernels(run_dir, times, std::cout); !status) {
      log::error() << "drk run: the re-measurement failed: " << status.error().message;
      return 1;
    }
  }
  return print_run_summary(run_dir);
}

}  // namespace drk::tools
