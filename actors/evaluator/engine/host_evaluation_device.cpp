#include "actors/evaluator/engine/host_evaluation_device.h"

#include "actors/evaluator/engine/bounds_check.h"
#include "actors/evaluator/engine/cpu_timer.h"
#include "actors/evaluator/evaluation_cpus.h"

namespace drk::evaluator {

void HostEvaluationDevice::configure_sandbox(EngineOptions& options) const {
  if (options.sandbox.cpus.empty()) options.sandbox.cpus = evaluation_cpus(options.max_threads);
}

std::unique_ptr<Timer> HostEvaluationDevice::make_timer(SandboxSession& session, const EngineOptions& options,
                                                        uint64_t order_seed) const {
  return std::make_unique<CpuTimer>(session, options, order_seed);
}

void HostEvaluationDevice::check_bounds(BoundsCheck& check, EvaluationRun& run,
                                        const compile::CompiledCandidate& compiled) const {
  check.guarded_call(run, compiled);
}

}  // namespace drk::evaluator
