// verify(): decides whether an evaluation result is honest, from the evidence the Evaluator
// collected. The Verifier never runs candidates itself; it reads the result and lists every
// failed check with its evidence, so that the Generator learns exactly what was wrong.
//
// Checks (reason codes, stable: the Archivist stores them and feedback names them):
//   sandbox_crashed      the sandbox died during the evaluation (signal or exit)
//   sandbox_timeout      the candidate missed its deadline and was killed
//   outputs_unwritten    an output still held the poison after a call
//   inputs_mutated       an input differed from its pristine copy after a call
//   candidate_error      the candidate's entry point returned a non-zero status
//   failed_to_load       the shared object did not load or lacks drk_kernel (not when harness_symbol
//                        refused it)
//   timer_mismatch       the harness's wall clock disagrees with what the sandbox reported
//   results_cached       correct in the trials, wrong on fresh inputs after timing (evidence
//                        staleAfterFreshInputs): results cached across calls, or work skipped
//                        because the output already held numbers; or (CPU) over 3x faster when
//                        each output already holds its own answer than when it holds another
//                        input's (answerReuseRatio): a cheap check of the answer, then no work
//   threads_left_running a thread the candidate started, at load time included, was alive after a
//                        batch (CPU sandbox: counted against the census taken before loading)
//   threads_beyond_limit CPU: the sandbox used more CPU time than ctx->max_threads threads can in
//                        its timed batches (cpuPerWall, the median batch's, over max_threads + 0.1)
//   precision_downgrade  the first trial's error against a float64 reference exceeds the
//                        float32 budget: max(64 x the float32 reference's own error, 2^-16),
//                        both relative to the output's scale
//   hardcoded_shape      correct at the task's shapes, wrong at its second shapes after returning
//                        DRK_OK there (evidence secondShapeWrong): extents or strides fixed in the
//                        source instead of read from the tensors
//   decoy                CUDA: the candidate's own kernels did none of the timed work of a
//                        correct result (CUPTI coverage)
//   work_after_return    work still running after drk_kernel returned: an output changed between
//                        the reply and a few ms later (outputsChangedAfterReturn); CPU, the
//                        sandbox used CPU while no call ran beyond what its library pool's
//                        max_threads - 1 workers may spin (cpuWhileIdleMs over 5 ms and the
//                        median idle interval's share idleCpuShare over max_threads - 0.5 cores);
//                        CUDA, a kernel of the candidate ended after the call's stream had
//                        passed the call's end (GpuProfile.unjoinedWork, however short the
//                        kernel), or the CUPTI span of a call's kernels outlasts its event time
//                        by over 25 % (and 2 us): a stream ctx->stream never joined
//   math_mode_changed    the candidate's code left the floating-point modes changed (rounding mode,
//                        MXCSR flush-to-zero or denormals-are-zero; actors/evaluator/math_modes.h)
//   out_of_bounds        an access outside the tensors in one call with every tensor in an allocation
//                        of its own (evidence sanitizerErrors; run on demand and, on CUDA, for results
//                        beyond the roofline): CUDA, compute-sanitizer memcheck; CPU, a fault in the
//                        guard pages around each tensor (actors/evaluator/guarded_tensors.h)
//   implausible_speedup  CUDA: a correct result beyond the roofline bound of its task on this
//                        device, timed twice (judging/roofline_bound.h); any device: one far
//                        beyond its task's best known speedup whose second timing does not hold
//                        (judging/best_known_bound.h)
//   uninitialised_read   the outputs read before they are written: trial 1 rerun on its inputs with
//                        the outputs pre-filled with a finite poison instead of NaN misses the
//                        reference (evidence uninitialisedRead), or CUDA: compute-sanitizer
//                        initcheck saw a read of device memory never written (initcheckErrors)
//   reply_tampered       the sandbox's reply pipe carried a frame that is not its answer to the
//                        request: a candidate forging the result channel (evidence replyTampered)
//   harness_symbol       the compiled object would bind to this process outside the C/C++ and CUDA
//                        runtimes (LibTorch, the sandbox executable, ...): refused before dlopen
//                        (evidence harnessSymbol; actors/evaluator/harness_imports.h)
//   static.*             the source reaches outside the ABI (actors/verifier/static_checks.h)
// Warnings (Verdict.warnings: reported, never failures): static.thread (thread use, CPU),
// static.side_stream (CUDA streams of its own, to be joined to ctx->stream), nondeterministic
// (trial 1 and its rerun differ bit for bit within tolerance: float atomics),
// library.used (library-table calls per candidate call; coverage below 1 on CUDA): the Oracle
// weighs library use, the Verifier only reports it; shape.declined (a non-zero status at the
// second shapes: a kernel specialised to the task's shapes, as the ABI allows); sanitizer.not_run
// (compute-sanitizer was asked for but could not run: its note).
// A result that failed to compile, or that is merely incorrect (NaN included), is not
// dishonest by its evidence (the Oracle's reward handles it); its source is still scanned.
// docs/verification.md describes every check and its evidence.
//
// Thread-safety: pure function.
#pragma once

#include "messages/drk.capnp.h"

namespace drk::verifier {

void verify(msg::EvalResult::Reader result, msg::Verdict::Builder out);

}  // namespace drk::verifier
