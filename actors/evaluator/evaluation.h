// EvaluationEngine: compiles a candidate, checks it against the task's reference and times both.
//
// evaluate() ALWAYS fills a complete msg::EvalResult for a candidate it can evaluate: a compile
// failure, a crash, a hang, a wrong answer are fields of the result, never errors. Steps:
//   1. compile (kernels/compile/compiler.h; cached by content) on the engine's CompilePool, which
//      may already be compiling it (compile_ahead()); a candidate that carries an object compiled
//      where it was generated (Candidate.compiled) is not compiled when the object is verified
//      (kernels/compile/compiled_artifact.h): it is filed into the cache and found there. The
//      result's candidate leaves the object out; its `compiled.use` says `used`, or `ignored`
//      with the reason in `compiled.note` (also logged), and the source was compiled;
//   2. load it into the warm sandbox (actors/evaluator/sandbox_process.h);
//   3. correctness over `trials` fresh input draws (seeds derived from a secret drawn per engine
//      from /dev/urandom): outputs are poisoned with a NaN before every call, the candidate runs
//      one call in the sandbox, the reference runs here (never in the sandbox) on a pristine
//      copy, outputs must satisfy |out - ref| <= atol + rtol * |ref| (NaN and Inf never pass),
//      and inputs must equal their pristine copy;
//   3b. when every trial passed and the task declares second shapes for the device evaluated
//      (docs/tasks.md), one more trial at them, in buffer set 0's place: DRK_OK with a wrong or
//      unwritten output there is evidence secondShapeWrong (hard-coded shapes) and makes the
//      result incorrect; a non-zero status is recorded (secondShapeStatus) and changes nothing;
//   4. timing, when every trial passed: the clock is this process's, outside the candidate's
//      reach: the wall time of a "run M calls" round trip to the sandbox minus a measured empty
//      round trip, M chosen so a batch lasts ~1 ms; the reference is timed here with
//      at::set_num_threads(max_threads); batches of both are interleaved in random order,
//      rotating over several input sets in shared memory, until the standard error of both
//      medians is under 1 % or the timing budget is spent; `warmup_calls` untimed calls a side
//      come right before the first timed batch;
//   5. a last batch on freshly drawn inputs (same addresses; the outputs keep the previous
//      inputs' answers, a finite second poison) whose outputs must still be correct: catches
//      results cached across timed calls and work skipped when the output already holds numbers
//      (evidence staleAfterFreshInputs, when most elements that miss still hold the previous
//      answers bit for bit; otherwise the candidate is merely incorrect).
// On CUDA (device cuda; the build needs the CUDA toolkit) the candidate is CUDA C++ compiled by
// nvcc (its resource report becomes `resources`) and runs in drk-sandbox-cuda on device copies
// of the shared region; correctness is checked here as above. Timing happens in the sandbox:
// every call timed alone with CUDA events after an L2 flush (2x its size), a persisting-L2
// reset and a device synchronisation; candidate and reference (LibTorch CUDA, in the sandbox,
// on the same device buffers) interleaved in random order within each round; CUPTI records
// every kernel of every timed call (`gpu`: coverage, kernels, event/CUPTI agreement, roofline
// against peaks the sandbox measures once). The stop rule is the CPU one. docs/gpu.md.
// speedup = reference median / candidate median when correct, else 0. The engine never judges
// honesty: it records evidence (poisoned outputs, mutated inputs, non-finite values, library-table
// calls, threads left running after a batch (CPU sandbox), stale results on fresh inputs, the
// sandbox's signal, the candidate's status) for the Verifier.
//
// Each step is a unit of actors/evaluator/engine/ whose header states its contract
// (compile_and_load.h, correctness_trials.h, timer.h with cpu_timer.h and cuda_timer.h,
// gpu_profile.h, bounds_check.h); what differs between the kinds of sandbox is an
// EvaluationDevice (engine/evaluation_device.h).
//
// Errors (only for a request that cannot be evaluated): not_found for an unknown task,
// unsupported for a device or language this build cannot run (a candidate for another device, or
// cuda in a build without the CUDA toolkit), io_error when the compiler or the sandbox cannot be
// started at all. On a machine without a GPU the CUDA engine is made, and every evaluation
// reports the sandbox's reason (failedToLoad: "no usable CUDA device ...").
//
// Thread-safety: one engine serves one thread at a time (it owns one sandbox and one shared
// region). It sets LibTorch's intra-op thread count of the process to max_threads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/compile/command_runner.h"
#include "kernels/compile/compile_pool.h"
#include "actors/evaluator/sandbox_process.h"
#include "judging/python_static_check.h"
#include "kernels/catalog/task.h"
#include "messages/drk.capnp.h"
#include "base/result.h"

namespace drk::evaluator {

class EvaluationDevice;   // engine/evaluation_device.h
class DeviceMemoryShare;  // engine/device_memory_share.h

struct EngineOptions {
  kernels::DeviceKind device = kernels::DeviceKind::cpu;
  uint32_t trials = 5;
  std::optional<uint64_t> seed;           // fixed seed for tests; otherwise secret, per engine
  int max_threads = 1;                    // for the candidate (drk_context) and the reference
  double timing_budget_ms = 2000;         // wall time the timing phase may use
  std::string cache_dir;                  // compile cache (required)
  std::string evaluator_name = "evaluator";
  std::chrono::milliseconds call_timeout{10000};  // one sandbox call: a trial or a timed batch
  std::chrono::milliseconds load_timeout{30000};  // sandbox start-up and loading a candidate
  std::chrono::milliseconds compile_timeout{60000};
  uint32_t compile_workers = 2;           // threads of the engine's CompilePool
  SandboxOptions sandbox;                 // executable and limits (max_threads is set from above)
  // Sandboxes forked ahead of the candidates that will run in them (eval.sandbox_spares): each
  // candidate gets a fresh one, and a spare has started its runtimes (on CUDA a context, LibTorch
  // CUDA and cuBLAS: 0.4 s on the H200) by then, unless the candidates come faster than that.
  uint32_t sandbox_spares = 1;
  // CPU: evaluate although LibTorch's BLAS is netlib's unoptimised reference implementation (a
  // crippled baseline); create() refuses it otherwise (eval.allow_reference_blas). Every result
  // then says so (EvalResult.referenceBlasUnoptimised).
  bool allow_reference_blas = false;
  std::shared_ptr<compile::CommandRunner> runner;  // runs the compiler; null: real processes
  // Makes the engine's device at create(); null: make_evaluation_device(). Tests inject a device
  // whose timer returns chosen samples, to check the steps that follow a timing.
  std::function<Result<std::unique_ptr<EvaluationDevice>>(const EngineOptions&)> make_device;
  double target_batch_ms = 1.0;           // a timed batch lasts at least this long
  uint32_t min_samples = 5;               // per side, before the precision test may stop
  uint32_t max_samples = 200;
  double target_relative_error = 0.01;    // standard error of the median / median
  uint32_t timing_sets = 3;               // input sets rotated between calls
  // Untimed calls of each side right before the timed ones, beyond the engine's own warm-up (the
  // first calls and, on the CPU, the batch calibration): KernelGYM's num_warmup (drk serve).
  uint32_t warmup_calls = 0;
  // CUDA only.
  std::optional<kernels::DeviceKind> shapes;  // whose shapes to evaluate at; default: the device's
  // Inputs drawn, outputs poisoned and checked on the GPU, in device memory this engine owns and
  // lends to its sandbox (docs/gpu.md); false: through the shared region and host copies.
  bool device_resident = true;
  uint32_t cuda_calls_per_round = 8;          // timed calls per side per sandbox round trip
  // Calls a side traced by CUPTI once the timing settled: the kernels, coverage and the
  // agreement come from them (tracing instruments kernels, so the timed calls run untraced).
  uint32_t cuda_profiled_calls = 3;
  double cupti_disagreement_threshold = 0.02; // |event - CUPTI span| / event of the profiled calls beyond this is flagged
  // Time both sides behind the launch hold (cuda/launch_hold.h), so that events measure the
  // device's work without the host's launch latency (eval.launch_latency: hidden). Off: the
  // events include it, as KernelBench's first timer did (its current one hides launches shorter
  // than the L2 thrash it queues before the start event; docs/gpu.md). Unset: hidden for Python
  // candidates, whose launches go through the interpreter on both sides (their speedups then
  // agree with KernelBench's own harness within 5 %: docs/benchmarks.md), included for the C ABI.
  std::optional<bool> hide_launch_latency;
  // Engines of one process that evaluate on the same GPU share this lock (`drk bench kernelbench
  // --jobs N` on cuda): each holds it while it times (the timed calls, the profiled ones, energy
  // and metrics), so that no timing runs beside another's; their sandboxes' start, compiles and
  // correctness trials overlap. Null: the engine has its device to itself.
  std::shared_ptr<std::mutex> device_timing_lock;
  // Shared by the same engines (engine/device_memory_share.h): an evaluation claims its footprint
  // before it allocates and gives the memory back at its end. Null: the engine keeps its tensors'
  // device memory from one evaluation to the next.
  std::shared_ptr<DeviceMemoryShare> device_memory_share;
  uint32_t energy_min_ms = 0;                 // energy per call (NVML) over >= this per side; 0: off
  bool hardware_metrics = false;              // DRAM/SM throughput, L2 hits, occupancy (CUPTI)
  // compute-sanitizer memcheck on one call of every correct candidate (`drk eval --sanitize`);
  // it also runs, whatever this says, for a result beyond the roofline bound.
  bool sanitize = false;
  std::chrono::milliseconds sanitizer_timeout{180000};  // start, load and one call under memcheck
  // Start, load and the one call of a Triton candidate that compiles its kernels (triton_warm_up.h).
  std::chrono::milliseconds triton_warm_up_timeout{180000};
  // KernelBench-format Python candidates (Language python: a ModelNew file) instead of the C ABI,
  // for KernelBench problems imported into `kernelbench_dir` (docs/kernelbench.md; "": the default,
  // kernels::default_kernelbench_directory()).
  bool python = false;
  std::string kernelbench_dir;
};

// eval.launch_latency / drk eval --launch-latency: "hidden" -> true, "included" -> false;
// invalid_argument naming both otherwise.
Result<bool> parse_launch_latency(std::string_view text);

// What the evaluations of an engine measure, as the EngineOptions fields of the same names: the
// correctness trials, the timed samples per side at most, the time one sandbox call (a trial or a
// timed batch) may take, and the untimed calls a side before the timed ones. drk serve sets it per
// request (KernelGYM's num_correct_trials, num_perf_trials, timeout and num_warmup).
// The caller sets every field (the engine's own values are its EngineOptions').
struct Measurement {
  uint32_t trials = 0;
  uint32_t max_samples = 0;
  std::chrono::milliseconds call_timeout{0};
  uint32_t warmup_calls = 0;
};

// A candidate as people hand it over (`drk eval`); actors pass msg::Candidate.
struct CandidateInput {
  std::string id;
  std::string task;
  kernels::DeviceKind device = kernels::DeviceKind::cpu;
  std::string source;
  double best_known_speedup = 0;  // as evaluate()'s
  bool python = false;  // a KernelBench-format ModelNew file (EngineOptions::python)
  judging::Backend python_backend = judging::Backend::pytorch;  // what the Python file was asked to write
};

class EvaluationEngine {
 public:
  static Result<std::unique_ptr<EvaluationEngine>> create(kernels::TaskCatalog catalog, EngineOptions options);
  ~EvaluationEngine();

  // `best_known_speedup`: the task's best verified speedup so far (EvalRequest.bestKnownSpeedup;
  // 0: none), against which a far faster result is timed again (best_known_bound.h). Device
  // memory that runs out in this process (torch's, in the reference or the checks) is io_error.
  Status evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out, double best_known_speedup = 0);
  Status evaluate(const CandidateInput& input, msg::EvalResult::Builder out);

  // Starts the compile of `candidate` ahead of its evaluate(), which then joins that compile or
  // finds it in the cache: files the object the candidate carries into the cache when it is
  // verified, then submits the source to the compile pool (a cache hit when it was filed).
  // Called on the engine's thread, like evaluate(), which takes what it made of the object.
  void compile_ahead(msg::Candidate::Reader candidate);

  // The engine's compiles (thread-safe, unlike the engine); its stats count shipped objects
  // adopted and refused.
  compile::CompilePool& compile_pool();

  const kernels::TaskCatalog& catalog() const;
  // A task of the catalog, or with `python` an imported KernelBench problem (kernelbench/...),
  // whose reference is made on first use: not_found naming the fix, or the reason the problem's
  // reference cannot run.
  Result<const kernels::Task*> find_task(const std::string& name);
  const EngineOptions& options() const;
  // The measurement of the evaluations that follow, in place of the options' (the engine's steps
  // read them at each evaluation); invalid_argument for zero trials, samples or call timeout.
  Status set_measurement(const Measurement& measurement);
  // The warm sandbox's process id, 0 when none is running (tests watch replacements with it).
  pid_t sandbox_pid() const;

  // Told of each step of an evaluation as it ends, on the engine's thread within evaluate():
  // "compile" (the compile, or the wait for one started ahead), "load", "correctness" (the
  // trials), "timing", "remeasure" (an implausible result timed again), "bounds check"; with
  // when it began and ended; and of each request to the candidate's sandbox within the steps
  // (SandboxSession::set_request_observer: "run" for a correctness trial, "timed batch",
  // ...). For traces (docs/traces.md); empty: nobody is told.
  using StepObserver = std::function<void(const char* step, std::chrono::steady_clock::time_point began,
                                          std::chrono::steady_clock::time_point ended)>;
  void set_step_observer(StepObserver observer);

 private:
  struct Impl;
  explicit EvaluationEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace drk::evaluator
