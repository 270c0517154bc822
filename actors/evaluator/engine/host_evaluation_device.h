// HostEvaluationDevice: C++ candidates that run on the CPU in drk-sandbox, on the shared region
// itself, timed by CpuTimer and checked for out-of-bounds accesses between guard pages. The
// contract is EvaluationDevice's (evaluation_device.h).
#pragma once

#include "actors/evaluator/engine/evaluation_device.h"

namespace drk::evaluator {

class HostEvaluationDevice : public EvaluationDevice {
 public:
  kernels::DeviceKind kind() const override { return kernels::DeviceKind::cpu; }
  msg::Language language() const override { return msg::Language::CPP; }
  // The sandbox's CPUs: the engine's own (evaluation_cpus.h) unless the options name some.
  void configure_sandbox(EngineOptions& options) const override;
  void describe_reference(kernels::ReferenceBuild&) const override {}
  // A CPU sandbox starts in 2-11 ms, and a start beside a timed batch would take a core from it.
  bool spares_beside_candidate() const override { return false; }
  TensorStore* device_store() override { return nullptr; }
  void after_reply() override {}
  void start_warm_up() override {}
  void finish_warm_up() override {}
  std::set<std::string> record_resources(const std::string&, msg::EvalResult::Builder) const override { return {}; }
  void before_load(SandboxSession&, TensorStore&) override {}
  std::unique_ptr<Timer> make_timer(SandboxSession& session, const EngineOptions& options,
                                    uint64_t order_seed) const override;
  void check_bounds(BoundsCheck& check, EvaluationRun& run, const compile::CompiledCandidate& compiled) const override;
};

}  // namespace drk::evaluator
