// CudaEvaluationDevice: CUDA C++ candidates, compiled by nvcc (its resource report becomes the
// result's `resources`), run in drk-sandbox-cuda; timed by CudaTimer (engine/cuda_timer.h), their
// GPU profile against peaks a sandbox measures once per engine before any candidate is loaded
// into it, checked for out-of-bounds accesses under compute-sanitizer (memcheck, then initcheck).
// With EngineOptions::device_resident, runs keep their tensors in device memory this process owns
// and lends to the sandbox (device_tensor_store.h); otherwise in the shared region, which the
// sandbox copies to the device. The contract is EvaluationDevice's (engine/evaluation_device.h).
#pragma once

#include <future>
#include <optional>

#include "actors/evaluator/cuda/device_tensor_store.h"
#include "actors/evaluator/engine/evaluation_device.h"

namespace drk::evaluator::cuda {

class CudaEvaluationDevice : public EvaluationDevice {
 public:
  explicit CudaEvaluationDevice(const EngineOptions& options);

  kernels::DeviceKind kind() const override { return kernels::DeviceKind::cuda; }
  msg::Language language() const override { return msg::Language::CUDA; }
  void configure_sandbox(EngineOptions& options) const override;
  void configure_compiler(compile::CompilerOptions& options) const override;
  int compute_capability() const override;
  void describe_reference(kernels::ReferenceBuild& build) const override;
  bool spares_beside_candidate() const override { return spares_beside_candidate_; }
  TensorStore* device_store() override { return resident_ ? &store_ : nullptr; }
  void after_reply() override { store_.replied(); }
  void give_back_device_memory(bool tensors_too) override;
  void start_warm_up() override;
  void finish_warm_up() override;
  std::set<std::string> record_resources(const std::string& compiler_output,
                                         msg::EvalResult::Builder out) const override;
  void before_load(SandboxSession& session, TensorStore& shared) override;
  std::unique_ptr<Timer> make_timer(SandboxSession& session, const EngineOptions& options,
                                    uint64_t order_seed) const override;
  void check_bounds(BoundsCheck& check, EvaluationRun& run, const compile::CompiledCandidate& compiled) const override;

 private:
  bool resident_;
  bool spares_beside_candidate_;
  std::chrono::milliseconds load_timeout_;
  DeviceTensorStore store_;
  std::optional<DevicePeaks> peaks_;  // measured once, by the first sandbox that is asked
  // LibTorch's CUDA start in this process (context, allocator, cuBLAS), begun at create() so that
  // it runs while the first candidate compiles.
  std::future<void> warm_up_;
};

}  // namespace drk::evaluator::cuda
