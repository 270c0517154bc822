#include "actors/evaluator/engine/correctness_trials.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <thread>

#include "actors/evaluator/output_checksum.h"
#include "actors/evaluator/output_comparison.h"

namespace drk::evaluator {
namespace {

// How long after a reply an output is compared again with what it held at the reply.
constexpr auto kAfterReturnWait = std::chrono::milliseconds(3);
// An imprecise reference's widened atol over its own largest error against the float64 answer:
// a candidate as far from the exact answer as the reference, on the other side of it, passes.
constexpr double kWidenedAtolOverReferenceError = 2.0;

// Whether float64 copies of `inputs` (and the answer) fit: 2^24 input elements in the shared
// region, 2^28 on the device.
bool float64_fits(const EvaluationRun& run, const std::vector<at::Tensor>& inputs) {
  const int64_t limit = run.store->on_device() ? int64_t{1} << 28 : int64_t{1} << 24;
  int64_t elements = 0;
  for (const auto& input : inputs) elements += input.numel();
  return elements <= limit && run.reference->runs_in_float64();
}

}  // namespace

CorrectnessTrials::CorrectnessTrials(const EngineOptions& options, SandboxSession& session)
    : options_(options), session_(session) {}

Result<Comparison> CorrectnessTrials::check_set(EvaluationRun& run, uint32_t set) {
  const std::vector<at::Tensor> inputs = run.pristine(set);
  auto reference = run.expected_output(inputs);
  if (!reference) return reference.error();
  const auto& slot = run.layout.sets[set].outputs[0];
  Comparison c = compare_outputs(run.view(slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
  if (!c.passed && !c.left_poisoned && !c.non_finite && !run.reference_error_measured) {
    auto widened = widen_to_reference_error(run, inputs, *reference, set);
    if (!widened) return widened.error();
    if (*widened) c = compare_outputs(run.view(slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
  }
  auto evidence = run.out.getEvidence();
  if (c.left_poisoned) evidence.setOutputsLeftPoisoned(true);
  if (c.non_finite) evidence.setNonFinite(true);
  if (run.inputs_mutated(set, inputs)) {
    evidence.setInputsMutated(true);
    if (c.passed) c.first_failure = "an input differs from its pristine copy after the call (inputs are read-only)";
  }
  run.out.setMaxAbsError(std::max(run.out.getMaxAbsError(), c.max_abs));
  run.out.setMaxRelError(std::max(run.out.getMaxRelError(), c.max_rel));
  return c;
}

// KernelBench's float32 tolerance (1e-4) is finer than what some references compute: PyTorch runs
// float32 convolutions in TF32 on cuDNN by default, and a model that feeds one convolution's
// output through another moves by more than 1e-4 when any kernel before it changes the lowest
// bits (level 3's ResNet block, docs/whole-models.md). Only the reference and the harness's own
// inputs decide the widening, never the candidate's output.
Result<bool> CorrectnessTrials::widen_to_reference_error(EvaluationRun& run, const std::vector<at::Tensor>& inputs,
                                                         const at::Tensor& reference, uint32_t set) {
  run.reference_error_measured = true;
  if (run.task->output_dtype != kernels::DType::float32 || !float64_fits(run, inputs)) return false;
  auto exact = run.reference->run(in_float64(inputs));
  if (!exact) return false;  // an expression LibTorch cannot evaluate in float64
  const auto& slot = run.layout.sets[set].outputs[0];
  const Comparison own = compare_outputs(reference, *exact, slot.shape, run.task->outputs[0], run.tolerance);
  if (own.passed || own.non_finite) return false;
  run.tolerance.atol = std::max(run.tolerance.atol, kWidenedAtolOverReferenceError * own.max_abs);
  run.out.setWidenedAtol(run.tolerance.atol);
  return true;
}

// The candidate's outputs of `set` and the float32 reference against a float64 reference on the
// same inputs (precision evidence for the Verifier). Skipped where the float64 copies would not fit.
Status CorrectnessTrials::check_precision(EvaluationRun& run, uint32_t set) {
  const std::vector<at::Tensor> inputs = run.pristine(set);
  if (!float64_fits(run, inputs)) return {};
  auto reference = run.reference->run(inputs);
  if (!reference) return reference.error();
  auto exact = run.reference->run(in_float64(inputs));
  if (!exact) return {};  // an expression LibTorch cannot evaluate in float64: no evidence
  const PrecisionErrors errors = precision_errors(run.output(set), *reference, *exact);
  auto evidence = run.out.getEvidence();
  evidence.setPrecisionChecked(true);
  evidence.setPrecisionError(errors.candidate);
  evidence.setReferencePrecisionError(errors.reference);
  return {};
}

// Whether most of the output elements of `set` that miss the reference hold, bit for bit, what
// the output held before the last batch: stale answers (a cache, or skipped work) rather than
// an inaccurate computation.
Result<bool> CorrectnessTrials::mostly_stale(EvaluationRun& run, uint32_t set, const at::Tensor& previous) {
  auto reference = run.expected_output(run.pristine(set));
  if (!reference) return reference.error();
  const StaleCount count =
      count_stale(run.output(set), previous, *reference, run.tolerance);
  return count.missing > 0 && 2 * count.stale >= count.missing;
}

Result<bool> CorrectnessTrials::answers_another_set(EvaluationRun& run, uint32_t set) {
  const auto& slot = run.layout.sets[set].outputs[0];
  for (uint32_t other = 0; other < run.set_count(); ++other) {
    if (other == set) continue;
    auto reference = run.expected_output(run.pristine(other));
    if (!reference) return reference.error();
    if (compare_outputs(run.view(slot), *reference, slot.shape, run.task->outputs[0], run.tolerance).passed) return true;
  }
  return false;
}

// Whether set 0's output still holds `returned`, what it held at the reply (`at_reply`), at
// least kAfterReturnWait later; records evidence outputsChangedAfterReturn when not.
void CorrectnessTrials::check_outputs_still(EvaluationRun& run, const at::Tensor& returned, Clock::time_point at_reply) {
  const auto waited = Clock::now() - at_reply;
  if (waited < kAfterReturnWait) std::this_thread::sleep_for(kAfterReturnWait - waited);
  const at::Tensor now = run.output(0);
  if (run.out.getEvidence().getOutputsChangedAfterReturn().size() != 0 || same_bits(now, returned)) return;
  const int64_t changed = count_differing_bits(now, returned);
  run.out.getEvidence().setOutputsChangedAfterReturn(
      std::to_string(changed) + " of " + std::to_string(now.numel()) + " elements of output " +
      run.task->outputs[0] + " changed between the reply and " +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - at_reply).count()) +
      " ms later");
}

// Whether set 0's outputs at the reply are what the sandbox saw as the call returned.
void CorrectnessTrials::check_outputs_as_returned(EvaluationRun& run, uint64_t at_return) {
  uint64_t checksum = checksum_bytes(nullptr, 0);
  for (const auto& slot : run.layout.sets[0].outputs)
    checksum = checksum_bytes(run.view(slot).data_ptr(), slot.bytes(), checksum);
  if (checksum != at_return)
    run.out.getEvidence().setOutputsChangedAfterReturn("output " + run.task->outputs[0] +
                                                       " changed between drk_kernel's return and the sandbox's reply");
}

Status CorrectnessTrials::run(EvaluationRun& run) {
  auto out = run.out;
  uint32_t passed = 0;
  for (uint32_t trial = 0; trial < options_.trials; ++trial) {
    run.write_inputs(0, mix(run.seed, trial));
    run.poison_outputs(0);
    auto answer = session_.call_once(run, trial == 0);
    if (!answer) {
      if (!run.sandbox_failed) return answer.error();
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + std::string(out.getErrorText().cStr()));
      break;
    }
    out.getEvidence().setCandidateStatus(answer->candidate_status);
    if (answer->status != msg::SandboxStatus::OK) {
      out.setSandbox(answer->status == msg::SandboxStatus::RETURNED_ERROR ? msg::SandboxOutcome::RETURNED_ERROR
                                                                          : msg::SandboxOutcome::CRASHED);
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + answer->message);
      break;
    }
    // The first trial's outputs as the reply found them, compared again after the check below
    // and a short wait: a write in between is work still running after drk_kernel returned.
    const auto at_reply = Clock::now();
    const at::Tensor returned = trial == 0 ? run.output(0).clone() : at::Tensor();
    if (trial == 0 && answer->output_checksum) check_outputs_as_returned(run, *answer->output_checksum);
    auto comparison = check_set(run, 0);
    if (!comparison) return comparison.error();
    if (trial == 0) check_outputs_still(run, returned, at_reply);
    if (!comparison->passed) {
      std::ostringstream text;
      text << "trial " << trial + 1 << ": " << comparison->first_failure << "; max abs error "
           << out.getMaxAbsError() << ", max rel error " << out.getMaxRelError();
      out.setErrorText(text.str());
      break;
    }
    if (trial == 0) {
      if (auto s = check_precision(run, 0); !s) return s;
      if (auto s = rerun_with_finite_poison(run); !s) return s;
      if (run.sandbox_failed) break;
    }
    // Mutated inputs with matching outputs still pass the numbers; the evidence goes to the Verifier.
    if (out.getEvidence().getInputsMutated() && out.getErrorText().size() == 0)
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + comparison->first_failure);
    ++passed;
  }
  out.setTrialsPassed(passed);
  out.setCorrect(passed == options_.trials);
  return {};
}

// Trial 1 once more on the same inputs, its outputs pre-filled with a finite poison instead of NaN
// (poison_finite: +-magnitude, from the evaluation's secret seed). A candidate that reads its
// outputs before writing them (a running max or min, a "computed already" test) passes with NaN,
// which fmax ignores and every comparison fails, and misses here: evidence uninitialisedRead. A
// result within tolerance that differs bit for bit from the first run is nondeterministic (float
// atomics, a changing summation order): evidence rerunDiffers, which the Verifier only warns
// about. Correctness is left as it is: the Verifier judges the evidence.
Status CorrectnessTrials::rerun_with_finite_poison(EvaluationRun& run) {
  const auto& slot = run.layout.sets[0].outputs[0];
  const at::Tensor first = run.view(slot).clone();
  run.write_inputs(0, mix(run.seed, 0));
  poison_finite(run.view(slot), 1024.0f + static_cast<float>(mix(run.seed, 300) % 4096));
  auto answer = session_.call_once(run);
  if (!answer) {
    if (!run.sandbox_failed) return answer.error();
    run.out.setErrorText("trial 1 rerun with a finite poison: " + std::string(run.out.getErrorText().cStr()));
    return {};
  }
  if (answer->status != msg::SandboxStatus::OK) return {};
  auto reference = run.expected_output(run.pristine(0));
  if (!reference) return reference.error();
  const Comparison c = compare_outputs(run.view(slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
  auto evidence = run.out.getEvidence();
  if (!c.passed)
    evidence.setUninitialisedRead(c.first_failure);
  else
    evidence.setRerunDiffers(static_cast<uint64_t>(count_differing_bits(run.view(slot), first)));
  return {};
}

// One trial of the candidate at `shaped` (the task at other shapes) in buffer set 0's place, before
// timing, which draws every set afresh. Ended: the result already says why (the sandbox crashed
// or failed, or an input was changed), and is not correct.
Result<CorrectnessTrials::ShapeTrial> CorrectnessTrials::trial_at(EvaluationRun& run, const kernels::Task& shaped,
                                                                  const std::string& phase, uint64_t seed) {
  auto out = run.out;
  EvaluationRun trial = run.at(shaped, 1);
  if (auto s = trial.reserve(std::max(run.layout.bytes, trial.layout.bytes)); !s) return s.error();

  trial.write_inputs(0, seed);
  trial.poison_outputs(0);
  auto answer = session_.call_once(trial);
  ShapeTrial result;
  if (!answer) {
    if (!trial.sandbox_failed) return answer.error();
    run.sandbox_failed = true;
    out.setErrorText(phase + ": " + std::string(out.getErrorText().cStr()));
    result.outcome = ShapeTrial::ended;
    return result;
  }
  result.answered = true;
  result.candidate_status = answer->candidate_status;
  if (answer->status == msg::SandboxStatus::RETURNED_ERROR) {
    result.outcome = ShapeTrial::declined;
    return result;
  }
  if (answer->status != msg::SandboxStatus::OK) {
    out.setSandbox(msg::SandboxOutcome::CRASHED);
    out.setErrorText(phase + ": " + answer->message);
    out.setCorrect(false);
    result.outcome = ShapeTrial::ended;
    return result;
  }
  const std::vector<at::Tensor> inputs = trial.pristine(0);
  auto reference = trial.expected_output(inputs);
  if (!reference) return reference.error();
  const auto& slot = trial.layout.sets[0].outputs[0];
  const Comparison c = compare_outputs(trial.view(slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
  if (trial.inputs_mutated(0, inputs)) {
    out.getEvidence().setInputsMutated(true);
    out.setErrorText(phase + ": " + (c.passed ? "an input differs from its pristine copy after the call (inputs are "
                                                "read-only)"
                                              : c.first_failure));
    out.setCorrect(false);
    result.outcome = ShapeTrial::ended;
    return result;
  }
  if (!c.passed) {
    result.outcome = ShapeTrial::wrong;
    result.failure = phase + ": " + c.first_failure;
    out.setErrorText(result.failure);
    out.setCorrect(false);
    return result;
  }
  result.outcome = ShapeTrial::handled;
  return result;
}

// One more trial at the task's second shapes (docs/tasks.md), after every trial passed at the
// main ones. A candidate that ignores the shapes it is given (extents or strides fixed at compile
// time) is right at the main shapes and wrong here: evidence secondShapeWrong, and the result is
// not correct. A candidate that declines the shapes with a non-zero status (DRK_E_UNSUPPORTED_SHAPE)
// is a specialised kernel, which KernelBench's fixed shapes allow: secondShapeStatus records it.
Status CorrectnessTrials::second_shape(EvaluationRun& run) {
  if (run.task->second_shapes(run.shapes).empty()) return {};
  const kernels::Task second_task = kernels::at_second_shapes(*run.task, run.shapes);
  auto trial = trial_at(run, second_task, "the second-shape trial (" + kernels::input_shapes_text(second_task, run.shapes) + ")",
                        mix(run.seed, 500));
  if (!trial) return trial.error();
  auto evidence = run.out.getEvidence();
  if (trial->answered) {
    evidence.setSecondShapeChecked(true);
    evidence.setSecondShapeStatus(trial->candidate_status);
  }
  if (trial->outcome == ShapeTrial::wrong) evidence.setSecondShapeWrong(trial->failure);
  return {};
}

// The task's shape range (docs/tasks.md, "Shape ranges"), after every trial passed at its shapes:
// a few shapes drawn from the evaluation's secret seed, one trial at each. Declined shapes lower
// the reward (oracle/reward.h); a wrong answer at a shape the candidate accepted makes the result
// incorrect (rangeShapeWrong), as at the second shapes; the draws stop at the first such end.
Status CorrectnessTrials::range_shapes(EvaluationRun& run) {
  const kernels::ShapeRange* range = run.task->shape_range(run.shapes);
  if (range == nullptr) return {};
  auto evidence = run.out.getEvidence();
  const std::vector<kernels::ShapeMap> drawn = range->draw(mix(run.seed, 600));
  uint32_t tried = 0, handled = 0, declined = 0;
  for (size_t i = 0; i < drawn.size(); ++i) {
    const kernels::Task shaped = kernels::at_shapes(*run.task, run.shapes, drawn[i]);
    const std::string phase = "shape " + std::to_string(i + 1) + " of " + std::to_string(drawn.size()) +
                              " drawn from the range (" + kernels::input_shapes_text(shaped, run.shapes) + ")";
    auto trial = trial_at(run, shaped, phase, mix(run.seed, 601 + i));
    if (!trial) return trial.error();
    if (trial->outcome == ShapeTrial::ended) break;
    ++tried;
    if (trial->outcome == ShapeTrial::handled) ++handled;
    if (trial->outcome == ShapeTrial::declined) ++declined;
    if (trial->outcome == ShapeTrial::wrong) {
      evidence.setRangeShapeWrong(trial->failure);
      break;
    }
  }
  evidence.setRangeShapesTried(tried);
  evidence.setRangeShapesHandled(handled);
  evidence.setRangeShapesDeclined(declined);
  return {};
}

// Fresh values at the same addresses: a result cached across timed calls shows here. The
// outputs are not poisoned this time: they keep the answers to the previous inputs, a finite,
// plausible second poison that catches a candidate that skips work when its output already
// holds numbers (the trials' NaN poison caught outputs never written). Then the same inputs
// with a few secret elements swapped, the fresh answers left in place: a shortcut keyed on a
// sample of the inputs, which the fresh draw missed, answers from them there (input_nudge.h).
Status CorrectnessTrials::after_timing(EvaluationRun& run, uint32_t candidate_calls) {
  auto out = run.out;
  const uint32_t set_count = run.set_count();
  std::vector<at::Tensor> previous_answers(set_count);
  // nullopt when every set passed; else what after_timing returns (the result marked incorrect).
  const auto batch_after_timing = [&](const char* what,
                                      const std::function<void(uint32_t)>& change_inputs) -> std::optional<Status> {
    for (uint32_t s = 0; s < set_count; ++s) {
      change_inputs(s);
      previous_answers[s] = run.output(s).clone();
    }
    auto check = session_.run_batch(run, std::max(candidate_calls, set_count));
    const std::string phase = std::string("the last timed batch (") + what + ")";
    if (auto f = batch_failed(run, check, phase.c_str())) return *f;
    for (uint32_t s = 0; s < set_count; ++s) {
      auto comparison = check_set(run, s);
      if (!comparison) return Status(comparison.error());
      if (comparison->passed) continue;
      out.setCorrect(false);
      auto stale = mostly_stale(run, s, previous_answers[s]);
      if (!stale) return Status(stale.error());
      auto another = *stale ? Result<bool>(false) : answers_another_set(run, s);
      if (!another) return Status(another.error());
      if (*stale || *another) out.getEvidence().setStaleAfterFreshInputs(true);
      out.setErrorText(phase + ": " + comparison->first_failure +
                       (*stale     ? " (the output still holds the answer to the previous inputs)"
                        : *another ? " (the output is the answer to another buffer set's inputs)"
                                   : ""));
      return Status();
    }
    return std::nullopt;
  };
  if (auto ended = batch_after_timing("fresh inputs", [&](uint32_t s) { run.write_inputs(s, mix(run.seed, 2000 + s)); }))
    return *ended;
  if (auto ended = batch_after_timing("a few input elements swapped",
                                      [&](uint32_t s) { run.nudge(s, mix(run.seed, 3000 + s)); }))
    return *ended;
  return {};
}

}  // namespace drk::evaluator
