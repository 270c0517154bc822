// CpuTimer: the CPU sandbox's timing. The clock is this process's, outside the candidate's reach:
// the wall time of a "run M calls" round trip to the sandbox minus the fastest empty round trip (a
// few before the timing, one each timed round), M chosen so that a batch lasts
// EngineOptions::target_batch_ms; the reference is timed
// here with LibTorch. Batches of both sides interleave in random order until they settle. Before
// them, untimed: a batch of each side, then EngineOptions::warmup_calls calls a side.
//
// Candidate batches rotate over the buffer sets: call g takes set g mod K's inputs and set
// g mod (K + 1)'s outputs (K + 1 sets: buffer_sets()), so that no timed call starts from an output
// that already holds its answer. Evidence: wallCheckRatio (this clock against the sandbox's),
// cpuPerWall (the sandbox's CPU time per batch), answerReuseRatio (batches whose outputs hold
// their own answers against rotated ones, by the sandbox's CPU time).
//
// With reference_in_sandbox (KernelBench-format Python problems), the reference is timed in the
// sandbox as the candidate is: batches of the problem's Model built beside the candidate
// (RunRequest.reference), on the same pinned CPU, by the same clock net of the same empty trip.
//
// Contract, ownership and thread-safety: Timer's (timer.h).
#pragma once

#include <random>

#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/engine/timer.h"
#include "actors/evaluator/engine/timing_summary.h"

namespace drk::evaluator {

class CpuTimer final : public Timer {
 public:
  // `order_seed`: the side that goes first in each round.
  CpuTimer(SandboxSession& session, const EngineOptions& options, uint64_t order_seed, bool reference_in_sandbox = false);

  // One set more than the inputs (its outputs make the rotation, which needs two input sets).
  uint32_t buffer_sets(uint32_t timing_sets) const override { return std::max<uint32_t>(timing_sets, 2) + 1; }
  Status time(EvaluationRun& run, TimingSamples& samples) override;

 private:
  // `timed`: RunRequest.timed (the timing's batches; not the answer-reuse measure, whose two
  // kinds of batch must do the same work).
  // `reference`: the calls are the timing reference beside the candidate (RunRequest.reference).
  Result<SandboxAnswer> run_rotating_batch(EvaluationRun& run, uint32_t calls, bool timed, bool reference = false);
  // `call_us`: the timing's candidate batches, per call.
  std::optional<Status> measure_answer_reuse(EvaluationRun& run, const TimingSummary& call_us);

  SandboxSession& session_;
  const EngineOptions& options_;
  std::mt19937_64 order_rng_;
  bool reference_in_sandbox_;
};

}  // namespace drk::evaluator
