// PythonCudaEvaluationDevice: KernelBench-format Python candidates (Language python) on CUDA, in
// drk-sandbox-cuda --python (python/python_candidate.h), with the problem's reference in this
// process's embedded interpreter on the device (python/python_reference.h), the judge of
// correctness. Everything else is the CUDA device's: device memory, CudaTimer, the GPU profile.
// What differs in timing: the reference timed beside the candidate is the problem's own Model,
// which the sandbox builds from the problem file (LoadRequest.python.referenceSource) before any
// of the candidate's code runs; both sides run on the harness's stream as torch's current stream.
// A candidate that imports Triton compiles its kernels in a warm-up call first
// (engine/triton_warm_up.h). The out-of-bounds check is compute-sanitizer memcheck on one call of
// the candidate in a sandbox of its own, loaded as its own sandbox loads it.
// The contract is EvaluationDevice's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/evaluator/cuda/cuda_evaluation_device.h"

namespace drk::evaluator::cuda {

class PythonCudaEvaluationDevice final : public CudaEvaluationDevice {
 public:
  // unsupported, naming the fix, when the Python program or its torch cannot be used.
  static Result<std::unique_ptr<EvaluationDevice>> create(const EngineOptions& options);

  msg::Language language() const override { return msg::Language::PYTHON; }
  void configure_sandbox(EngineOptions& options) const override;
  void describe_reference(kernels::ReferenceBuild& build) const override;
  void fill_load(const EvaluationRun& run, msg::LoadRequest::Builder load) const override;
  // Not under compute-sanitizer yet (its separate sandbox loads no Python problem): the evidence's
  // sanitizerNote says so, rather than a sanitizer run that cannot load the file.
  void check_bounds(BoundsCheck& check, EvaluationRun& run, const compile::CompiledCandidate& compiled) const override;

 private:
  PythonCudaEvaluationDevice(const EngineOptions& options, std::vector<std::string> search_path)
      : CudaEvaluationDevice(options), search_path_(std::move(search_path)) {}
  std::vector<std::string> search_path_;
};

}  // namespace drk::evaluator::cuda
