// PythonHostEvaluationDevice: KernelBench-format Python candidates (Language python) on the CPU,
// in drk-sandbox --python (python/python_candidate.h), with the problem's reference in this
// process's embedded interpreter (python/python_reference.h), the judge of correctness; the
// timing reference is the problem's Model built in the sandbox beside the candidate. Everything
// else is the host device's: the shared region, CpuTimer, the guard pages. The contract is
// EvaluationDevice's.
//
// The sandbox's interpreter takes the module search path of python_program() (with torch), read
// once when the device is made; the Evaluator's own interpreter is started with it too.
#pragma once

#include <string>
#include <vector>

#include "actors/evaluator/engine/host_evaluation_device.h"

namespace drk::evaluator {

class PythonHostEvaluationDevice final : public HostEvaluationDevice {
 public:
  // unsupported, naming the fix, when the Python program or its torch cannot be used.
  static Result<std::unique_ptr<EvaluationDevice>> create();

  msg::Language language() const override { return msg::Language::PYTHON; }
  void configure_sandbox(EngineOptions& options) const override;
  void describe_reference(kernels::ReferenceBuild& build) const override;
  // The problem's init inputs, init seed and plain arguments, from the run's PythonReference.
  void fill_load(const EvaluationRun& run, msg::LoadRequest::Builder load) const override;
  // CpuTimer with the reference timed in the sandbox: the problem's Model beside the candidate,
  // on the same pinned CPU (both sides run as Python through the same tensors).
  std::unique_ptr<Timer> make_timer(SandboxSession& session, const EngineOptions& options,
                                    uint64_t order_seed) const override;

 private:
  explicit PythonHostEvaluationDevice(std::vector<std::string> search_path) : search_path_(std::move(search_path)) {}
  std::vector<std::string> search_path_;
};

}  // namespace drk::evaluator
