// Re-measurement of a finished run's best kernels. A best-of-run speedup selects the luckiest
// measurement among thousands (a reference that happened to run slow on a loaded machine), so
// before a leaderboard quotes it, each task's best verified kernel is evaluated `times` more
// times, on fresh inputs, with the engine settings the run used (its topology.yaml: device,
// shapes, trials, timing budget, tasks), and the medians are recorded in the run's archive
// (table `remeasured`, docs/archive.md) where `drk archive summary` shows them.
//
// Thread-safety: one call at a time per run directory (it writes the archive). Errors:
// not_found for a run directory without an archive or topology.yaml; the engine's own errors
// (a device this build cannot evaluate); a kernel that is no longer correct is recorded with
// 0 evaluations, not an error. How far it has come (evaluations done, left, time left) goes to
// stderr (runtime/progress_meter.h).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "base/result.h"

namespace drk::tools {

// Re-measures and prints one line per task to `out`.
Status remeasure_best_kernels(const std::string& run_dir, uint32_t times, std::ostream& out);

// The run's `experiment.remeasure` (0 when absent): how many times `drk run` re-measures at
// the end of a finished run.
uint32_t configured_remeasure_times(const std::string& run_dir);

}  // namespace drk::tools
