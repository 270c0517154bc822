// The run as the dashboard shows it (docs/dashboard.md gives every field and its definition): one
// JSON object from what the archive recorded (run_records.h) and what the head sees live
// (runtime::SystemView: actors, mailboxes, dead letters, processes, nodes).
//
//   run          topology, run_dir, now_unix_ms, finished (the last step recorded says so),
//                training (the newest progress line)
//   steps        per step: mean_reward, best_speedup, correct_fraction, seconds, and fast_p:
//                Fast@p over the run's tasks, cumulative up to the step
//   outcomes     evaluations by outcome (correct, hacked, failed, screened: run_records.h)
//   verifier_reasons  failed checks by code, most frequent first
//   tasks        per task: its best verified kernel, or its newest candidate when none is
//   evaluators   evaluations, utilisation, gpu_busy_fraction (evaluator_usage.h)
//   compile_cache     hits and misses of the evaluated candidates' compiles
//   actors, processes, nodes   from the SystemView
//
// Thread-safety: pure functions but for `records`, whose sources it reads (RunRecords::source_of).
#pragma once

#include <cstdint>

#include "base/json_text.h"
#include "runtime/inspection/inspection_view.h"
#include "tools/observe/run_records.h"

namespace drk::observe {

// The thresholds p of Fast@p (KernelBench's): the share of tasks with a verified kernel faster
// than the reference by more than p (speedup > p); at p = 0, the share with a verified kernel.
inline constexpr double kFastPThresholds[] = {0.0, 1.0, 1.2, 1.5, 2.0};

Json run_snapshot(RunRecords& records, const runtime::SystemView& system, int64_t now_unix_ms);

// The snapshot's "steps" alone (what /metrics reads Fast@p from).
Json snapshot_steps(const RunRecords& records);

}  // namespace drk::observe
