#include "actors/evaluator/cuda/cuda_evaluation_device.h"

#include <algorithm>

#include <capnp/message.h>
#include <cuda_runtime_api.h>
#ifdef DRK_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "actors/evaluator/engine/bounds_check.h"
#include "actors/evaluator/engine/cuda_timer.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/ptxas_report.h"

namespace drk::evaluator::cuda {

// Spares start also when a candidate begins: a CUDA sandbox's start (a context, LibTorch CUDA and
// cuBLAS: 0.3-0.45 s on the H200) would otherwise add to the next candidate's latency whole, so
// it overlaps the evaluation that took the spare before it, timing included, in another process
// and context (the timings' stability with it: docs/benchmarks.md). Not with a GPU memory limit,
// which a sandbox reads from the device's free memory, where a spare's new context would count
// against the candidate.
CudaEvaluationDevice::CudaEvaluationDevice(const EngineOptions& options)
    : resident_(options.device_resident),
      spares_beside_candidate_(options.sandbox.gpu_memory_limit_bytes == 0),
      load_timeout_(options.load_timeout) {}

// LibTorch's cache in this process holds the checks' copies (and a Python reference's tensors),
// a few of the problem's tensors at their largest: kept, they would starve the next sandbox. The
// tensor store itself stays unless shared: the next evaluation reuses it.
void CudaEvaluationDevice::give_back_device_memory(bool tensors_too) {
  if (tensors_too) store_.release();
#ifdef DRK_TORCH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

void CudaEvaluationDevice::configure_sandbox(EngineOptions& options) const {
  if (options.sandbox.executable == default_sandbox_executable())
    options.sandbox.executable = default_cuda_sandbox_executable();
  // CUDA reserves far more address space than it uses, and its libraries open more files.
  options.sandbox.limit_address_space = false;
  // CUPTI's profiler needs the GPU's counters, which the driver keeps for administrators by
  // default: with hardware metrics asked for, the sandboxes keep the Evaluator's user.
  if (options.hardware_metrics) options.sandbox.own_user = false;
  options.sandbox.max_open_files = std::max<uint64_t>(options.sandbox.max_open_files, 1024);
}

// nvcc's -arch and load_inline's architecture: this GPU's (sm_90 on the H200). Without a device the
// defaults stay, and the sandbox says why nothing runs.
void CudaEvaluationDevice::configure_compiler(compile::CompilerOptions& options) const {
  const int capability = compute_capability();
  if (capability == 0) return;
  const std::string architecture = "sm_" + std::to_string(capability);
  for (auto& flag : options.flags)
    if (flag.rfind("-arch=", 0) == 0) flag = "-arch=" + architecture;
  if (options.load_inline) options.load_inline->cuda_architecture = architecture;
}

int CudaEvaluationDevice::compute_capability() const {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return major * 10 + minor;
}

void CudaEvaluationDevice::describe_reference(kernels::ReferenceBuild& build) const {
  build.blas = "cuBLAS on the GPU";
  build.unoptimised_blas = false;
}

// 0.3-0.6 s of a first evaluation on the H200, out of its way. A failure here is no result: the
// first evaluation meets it again where it is reported.
void CudaEvaluationDevice::start_warm_up() {
  if (!resident_) return;
  warm_up_ = std::async(std::launch::async, [] {
    try {
      const auto a = at::ones({64, 64}, at::TensorOptions().device(at::kCUDA));
      (void)at::matmul(a, a).sum().item<float>();
    } catch (const std::exception&) {
    }
  });
}

void CudaEvaluationDevice::finish_warm_up() {
  if (warm_up_.valid()) warm_up_.get();
}

std::set<std::string> CudaEvaluationDevice::record_resources(const std::string& compiler_output,
                                                             msg::EvalResult::Builder out) const {
  const std::vector<KernelResourceUsage> own_kernels = parse_ptxas_report(compiler_output);
  auto resources = out.initResources(static_cast<unsigned>(own_kernels.size()));
  std::set<std::string> names;
  for (unsigned k = 0; k < own_kernels.size(); ++k) {
    const auto& usage = own_kernels[k];
    auto entry = resources[k];
    entry.setName(usage.name);
    entry.setRegisters(usage.registers);
    entry.setSpillStoreBytes(usage.spill_store_bytes);
    entry.setSpillLoadBytes(usage.spill_load_bytes);
    entry.setStackFrameBytes(usage.stack_frame_bytes);
    entry.setSharedBytes(usage.shared_bytes);
    entry.setConstantBytes(usage.constant_bytes);
    names.insert(usage.name);
  }
  return names;
}

// The device's peaks (the roofline's), measured by a sandbox before a candidate is loaded into
// it, so that no candidate's code runs in the process that measures them. A sandbox that cannot
// measure them (no device) leaves them unknown: its load says why.
void CudaEvaluationDevice::before_load(SandboxSession& session, TensorStore& shared) {
  if (peaks_) return;
  capnp::MallocMessageBuilder scratch;
  EvaluationRun probe;
  probe.store = &shared;
  probe.out = scratch.initRoot<msg::EvalResult>();
  auto answer = session.call(probe, load_timeout_, [](msg::SandboxRequest::Builder request) { request.setPeaks(); });
  if (answer && answer->status == msg::SandboxStatus::OK) peaks_ = answer->peaks;
}

std::unique_ptr<Timer> CudaEvaluationDevice::make_timer(SandboxSession& session, const EngineOptions& options,
                                                        uint64_t order_seed) const {
  return std::make_unique<CudaTimer>(session, options, peaks_, order_seed);
}

void CudaEvaluationDevice::check_bounds(BoundsCheck& check, EvaluationRun& run,
                                        const compile::CompiledCandidate& compiled) const {
  check.sanitizer(run, compiled, false);
  check.sanitizer(run, compiled, true);
}

}  // namespace drk::evaluator::cuda
