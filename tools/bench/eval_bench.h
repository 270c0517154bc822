// The evaluation benchmark (`drk bench eval`): the real EvaluationEngine over a mix of the ported
// tasks (elementwise, rowwise, gemm), with the hand-written honest
// candidates of tests/candidates (CPU) or tests/candidates/cuda (CUDA). In one run it measures:
//   - the latency of one evaluation with a cold compile cache (every sample a source never
//     compiled before) and with a warm one (the same sources again), medians, with the median of
//     each phase (compile, load, correctness, timing: EvalResult's *Ms fields);
//   - throughput, evaluations per hour (per GPU-hour on cuda: one engine drives one GPU), over a
//     stream of fresh candidates, as an Evaluator serves them: compiled inline (pool of 1, no
//     compile ahead: the Evaluator before its CompilePool), with a pool of 1 compiling the next
//     candidate ahead, and with a pool of N compiling the next N ahead (eval.compile_workers: N,
//     eval.slots: N + 1), side by side;
//   - on cuda, timing stability (unless `stability` is off): the same candidate evaluated
//     `stability_evaluations` times (10) for kernels of well over 50 us: matmul at 2048^3 and
//     softmax at 4096 x 8192 (KernelBench's 4096^3 and 4096 x 393216 cost seconds of CPU-side
//     drawing and checking per evaluation, too much to repeat ten times); per task the CV
//     of the medians across the evaluations, the median within-evaluation CV, and the
//     events-vs-CUPTI disagreement (issue 4's goals: CV <= 1 %, events and CUPTI within 2 %).
// Every candidate must come out correct; a wrong one fails the run (exit 1), since the numbers
// would then measure the wrong thing.
//
// Thread-safety: run_eval_bench runs on the calling thread (the engine's pool has its own).
// Errors: the exit code (0, 1 when an engine cannot be made or a candidate is not correct) with
// the reason logged; the candidates are read from $DRK_SOURCE_DIR (else the build's source tree).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "kernels/catalog/task.h"

namespace drk::bench {

struct EvalBenchOptions {
  kernels::DeviceKind device = kernels::DeviceKind::cpu;
  std::optional<kernels::DeviceKind> shapes;  // default: the tasks' scaled (cpu) shapes
  bool json = false;
  bool quick = false;                         // fewer samples: about a third of the time
  uint32_t compile_workers = 2;               // N of the widest pool measured
  uint32_t trials = 5;                        // EngineOptions::trials
  double timing_budget_ms = 100;              // EngineOptions::timing_budget_ms
  uint32_t sandbox_spares = 1;                // EngineOptions::sandbox_spares
  bool stability = true;                      // cuda only: the stability section
  uint32_t stability_evaluations = 10;
  std::string program = "drk bench eval";     // for messages
};

int run_eval_bench(const EvalBenchOptions& options, std::ostream& out);

}  // namespace drk::bench
