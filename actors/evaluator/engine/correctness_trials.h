// CorrectnessTrials: whether a candidate computes the task's answer, and the evidence of how.
//
//   run():          `trials` fresh input draws on buffer set 0 (seeds derived from the evaluation's
//                   secret seed): outputs poisoned with a NaN before every call, one call of the
//                   candidate in the sandbox, the reference here (never in the sandbox) on a
//                   pristine copy; outputs must satisfy |out - ref| <= atol + rtol * |ref| (NaN and
//                   Inf never pass), inputs must equal their pristine copy. The first trial also
//                   checks the outputs at the return against the reply and a moment later
//                   (outputsChangedAfterReturn), the precision against float64
//                   (precisionError), and runs once more with a finite poison
//                   (uninitialisedRead, rerunDiffers).
//   second_shape(): when every trial passed and the task declares second shapes for the device
//                   (docs/tasks.md), one more trial at them in buffer set 0's place: a wrong or
//                   unwritten output there is evidence secondShapeWrong and makes the result
//                   incorrect; a non-zero status is recorded (secondShapeStatus) and changes nothing.
//   range_shapes(): when every trial passed and the task declares a shape range for the device
//                   (docs/tasks.md, "Shape ranges"), a trial at each of a few shapes drawn from it
//                   with the evaluation's secret seed: rangeShapesTried, rangeShapesHandled,
//                   rangeShapesDeclined; a wrong answer at a shape it accepted is rangeShapeWrong
//                   and makes the result incorrect.
//   after_timing(): a batch on freshly drawn inputs at the same addresses (the outputs keep the
//                   previous inputs' answers, a finite second poison), then one with a few secret
//                   input elements swapped, whose outputs must still be correct: catches results
//                   cached across timed calls and work skipped when the output already holds
//                   numbers (staleAfterFreshInputs, when most elements that miss still hold the
//                   previous answers bit for bit; otherwise the candidate is merely incorrect).
//
// Outcomes (a wrong answer, a crash) are fields of the result (correct, errorText, evidence); a
// returned error is a fault: the reference failed, or no sandbox could be started.
// Ownership: refers to the engine's options and session, which outlive it. Thread-safety: the
// engine's thread only.
#pragma once

#include <cstdint>
#include <string>

#include "actors/evaluator/engine/engine_clock.h"
#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/evaluation.h"
#include "actors/evaluator/output_comparison.h"

namespace drk::evaluator {

class CorrectnessTrials {
 public:
  CorrectnessTrials(const EngineOptions& options, SandboxSession& session);

  // Sets trialsPassed and correct.
  Status run(EvaluationRun& run);
  Status second_shape(EvaluationRun& run);
  Status range_shapes(EvaluationRun& run);
  // `candidate_calls`: the timed candidate batches' calls; the checking batches make at least as
  // many, and one per buffer set.
  Status after_timing(EvaluationRun& run, uint32_t candidate_calls);

  struct ShapeTrial {
    enum Outcome { handled, declined, wrong, ended } outcome = ended;
    bool answered = false;          // the sandbox answered the call (crashed or not)
    int32_t candidate_status = 0;   // what the candidate returned
    std::string failure;            // wrong: the phase and the first mismatch
  };
  // One trial at `shaped` (the task at other shapes), inputs drawn from `seed`; `phase` names it in
  // messages. wrong: the result is marked incorrect with the failure as its error. ended: the
  // result says why it is not correct (crash, sandbox failure, input changed). The second shapes,
  // the range's draws and the timed shapes (evaluation.cpp) each begin with one.
  Result<ShapeTrial> trial_at(EvaluationRun& run, const kernels::Task& shaped, const std::string& phase,
                              uint64_t seed);

 private:
  Status rerun_with_finite_poison(EvaluationRun& run);
  // Checks the outputs of `set` against the reference on its pristine inputs; records evidence.
  Result<Comparison> check_set(EvaluationRun& run, uint32_t set);
  Status check_precision(EvaluationRun& run, uint32_t set);
  // After a comparison of `set` failed: whether the float32 reference (`reference`, on the set's
  // pristine `inputs`) itself misses the float64 answer by more than the task's tolerance. If so,
  // the run's atol becomes kWidenedAtolOverReferenceError times the reference's own largest error,
  // recorded as widenedAtol, and the caller compares again. Measured once per evaluation.
  Result<bool> widen_to_reference_error(EvaluationRun& run, const std::vector<at::Tensor>& inputs,
                                        const at::Tensor& reference, uint32_t set);
  Result<bool> mostly_stale(EvaluationRun& run, uint32_t set, const at::Tensor& previous);
  // Whether the outputs of `set` are, within tolerance, the answer to another set's inputs: a result
  // kept from one input and returned for another (a CUDA graph replayed on the input it captured).
  Result<bool> answers_another_set(EvaluationRun& run, uint32_t set);
  void check_outputs_still(EvaluationRun& run, const at::Tensor& returned, Clock::time_point at_reply);
  void check_outputs_as_returned(EvaluationRun& run, uint64_t at_return);

  const EngineOptions& options_;
  SandboxSession& session_;
};

}  // namespace drk::evaluator
