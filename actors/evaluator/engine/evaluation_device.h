// EvaluationDevice: what differs, on the Evaluator's side, between the kinds of sandbox its
// candidates run in: the language it compiles, the sandbox program and its limits, what the
// reference runs on, where a run's tensors live (the shared region, or device memory lent to the
// sandbox), the device's peaks, the compiler's resource report, how a candidate is timed
// (timer.h) and checked for out-of-bounds accesses (bounds_check.h). The engine (evaluation.h)
// runs the same steps on every device; a new kind of sandbox is a new implementation of this
// interface (and of Timer), chosen by make_evaluation_device().
//
// Implementations: HostEvaluationDevice (host_evaluation_device.h: C++ candidates in drk-sandbox),
// PythonHostEvaluationDevice (python_host_evaluation_device.h: KernelBench-format Python in
// drk-sandbox --python), CudaEvaluationDevice (cuda/cuda_evaluation_device.h: CUDA C++ in
// drk-sandbox-cuda).
//
// Ownership: the engine owns its device; what a device hands out (its store, its timer) lives no
// longer than it. Thread-safety: the engine's thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "actors/evaluator/engine/sandbox_answer.h"
#include "actors/evaluator/engine/tensor_store.h"
#include "actors/evaluator/engine/timer.h"
#include "actors/evaluator/evaluation.h"
#include "kernels/catalog/reference_build.h"
#include "kernels/compile/compiler.h"

namespace drk::evaluator {

class BoundsCheck;
class SandboxSession;
struct EvaluationRun;

class EvaluationDevice {
 public:
  virtual ~EvaluationDevice() = default;

  virtual kernels::DeviceKind kind() const = 0;
  // The language of the candidates it evaluates, which its compiler compiles.
  virtual msg::Language language() const = 0;
  // At create(): the sandbox program and the limits it needs (`options.sandbox`).
  virtual void configure_sandbox(EngineOptions& options) const = 0;
  // At create(): the compiler's options for this device (the GPU's architecture).
  virtual void configure_compiler(compile::CompilerOptions&) const {}
  // The GPU's compute capability (major * 10 + minor) for the dtypes it runs
  // (kernels/catalog/dtype_variant.h); 0 for the CPU, or where it cannot be read.
  virtual int compute_capability() const { return 0; }
  // What the reference runs on, from this process's build (kernels::reference_build()).
  virtual void describe_reference(kernels::ReferenceBuild& build) const = 0;
  // Whether spares are started also when a candidate begins, not only when one ends.
  virtual bool spares_beside_candidate() const = 0;

  // Device memory that runs keep their tensors in; nullptr: the shared region.
  virtual TensorStore* device_store() = 0;
  // After every reply of a sandbox: memory it no longer maps may go.
  virtual void after_reply() = 0;
  // After every evaluation, once its sandbox has gone: the device memory this process cached for
  // it (LibTorch's cached blocks: the checks' copies, the reference's) goes back to the device,
  // where the next candidate's sandbox allocates (its reference, in its own process, found 3 GiB
  // left of an 80 GiB H100 beside a cache that had grown to 74 GiB). With `tensors_too` (under a
  // DeviceMemoryShare, which counted them as the evaluation's only while it ran) its tensors too.
  virtual void give_back_device_memory(bool /*tensors_too*/) {}
  // Starts, at create(), what the first evaluation would otherwise wait for; finish_warm_up()
  // waits for it (before the first candidate loads).
  virtual void start_warm_up() = 0;
  virtual void finish_warm_up() = 0;

  // The compiler's report on the candidate's own kernels into `out.resources`; their names (the
  // GPU profile's own kernels). Nothing where the compiler gives none.
  virtual std::set<std::string> record_resources(const std::string& compiler_output,
                                                 msg::EvalResult::Builder out) const = 0;
  // Before a candidate is loaded into its fresh sandbox: measurements no candidate's code may
  // share a process with (the device's peaks, once per engine); its requests name `shared`, the
  // shared region's store.
  virtual void before_load(SandboxSession& session, TensorStore& shared) = 0;
  // What a load request carries besides the object (LoadRequest.python for Python candidates).
  virtual void fill_load(const EvaluationRun&, msg::LoadRequest::Builder) const {}
  // The timer of this kind of sandbox; `order_seed` orders its sides.
  virtual std::unique_ptr<Timer> make_timer(SandboxSession& session, const EngineOptions& options,
                                            uint64_t order_seed) const = 0;
  // The out-of-bounds check of a correct candidate (`compiled`: its object and modules).
  virtual void check_bounds(BoundsCheck& check, EvaluationRun& run, const compile::CompiledCandidate& compiled) const = 0;
};

// The free memory of this process's current GPU (0 without CUDA or a device): what engines on it
// may share (EngineOptions::device_memory_share).
size_t free_device_memory();

// The device of `options.device`; unsupported for a device this build cannot run (cuda without the
// CUDA toolkit), naming the fix.
Result<std::unique_ptr<EvaluationDevice>> make_evaluation_device(const EngineOptions& options);

}  // namespace drk::evaluator
