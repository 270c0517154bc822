// CudaSandboxDevice: the CUDA device of drk-sandbox-cuda (sandbox_device.h): device memory
// mirroring the shared region (or the Evaluator's, lent), the candidate's stream and device
// workspace, timed calls (CUDA events, L2 flush, persisting-L2 reset; CUPTI records of the
// profiled calls only) of the candidate and of the task's LibTorch reference on the same device,
// the device's measured peaks, energy per call (NVML), hardware metrics (CUPTI's Range Profiler),
// and the candidate's device memory against its limit.
//
// Why a sibling executable rather than CUDA in drk-sandbox: the CPU sandbox must build and run
// where there is no CUDA toolkit or driver, starts in milliseconds without a CUDA context, and
// runs under an address-space limit that CUDA's reservations cannot live with; CUPTI's activity
// state is per process, so the process that times is the one that traces.
//
// One class, its members defined by concern:
//   cuda_sandbox_device.cpp     start, device memory and the region, calls and their memory
//   cuda_sandbox_reference.cpp  the timing reference: the task's LibTorch expression over the
//                               candidate's inputs, or a KernelBench problem's Model
//   cuda_sandbox_timing.cpp     time requests: events, launch hold, L2, input swaps, CUPTI records
//   cuda_sandbox_energy.cpp     energy requests (NVML)
//   cuda_sandbox_peaks.cpp      the device's peaks (the harness's own kernels)
//   cuda_sandbox_metrics.cpp    metrics requests (CUPTI's Range Profiler)
//
// Thread-safety, errors: as SandboxDevice's (the sandbox's main thread; a CUDA error in a call
// latches broken(), and the sandbox exits after its reply). Ownership: owns its stream, its
// device allocations, the Evaluator's region while attached (closed on detach and at
// destruction), its kernel trace, launch hold and NVML session. One instance per process: the
// candidate's workspace callback reaches the live instance's workspace through a global.
#pragma once

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/evaluator/bump_workspace.h"
#include "actors/evaluator/cuda/cupti_kernel_trace.h"
#include "actors/evaluator/cuda/device_kernels.h"
#include "actors/evaluator/cuda/launch_hold.h"
#include "actors/evaluator/cuda/nvml_energy.h"
#include "actors/evaluator/sandbox_device.h"
#include "base/result.h"
#include "kernels/catalog/reference.h"

namespace drk::evaluator {

// Workspace blocks in device memory; an allocation failure is not sticky, so it is cleared.
struct DeviceMemory {
  static void* allocate(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
    cudaGetLastError();
    return nullptr;
  }
  static void release(void* p) { cudaFree(p); }
};
using DeviceWorkspace = BumpWorkspace<DeviceMemory>;

class CudaSandboxDevice final : public SandboxDevice {
 public:
  // nullptr, with `error` saying why, when no device is usable or the context, the stream, the
  // L2 flush buffer or the kernel trace cannot be set up.
  static std::unique_ptr<SandboxDevice> create(const SandboxDeviceOptions& options, std::string& error);
  ~CudaSandboxDevice() override;

  Status mirror_region(uint8_t* host, size_t bytes) override;
  Status attach_region(const uint8_t* handle, size_t handle_bytes, uint64_t bytes) override;
  uint64_t attached_bytes() const override { return attached_ ? attached_bytes_ : 0; }
  void* tensor_data(uint64_t offset, uint64_t bytes) override;
  void prepare_context(drk_context& context) override;

  void begin_candidate() override;
  void begin_call() override;
  void end_call() override;
  uint64_t candidate_memory_bytes() const override { return peak_held_; }
  bool over_memory_limit() const override { return over_limit_; }
  std::string memory_limit_message() const override { return limit_message_; }

  // Nothing to copy while the Evaluator's device memory is attached: it checks there itself.
  Status copy_to_device(const std::vector<RegionRange>& ranges) override;
  Status copy_to_host(const std::vector<RegionRange>& ranges) override;
  Status synchronize() override;
  bool broken() const override { return broken_; }
  void end() override;

  void time(msg::TimeRequest::Reader request, CandidateCalls& calls, msg::SandboxReply::Builder reply) override;
  void measure_peaks(msg::SandboxReply::Builder reply) override;
  void measure_energy(msg::EnergyRequest::Reader request, CandidateCalls& calls,
                      msg::SandboxReply::Builder reply) override;
  void measure_metrics(CandidateCalls& calls, msg::SandboxReply::Builder reply) override;

 private:
  struct CudaEvent {
    cudaEvent_t event = nullptr;
    CudaEvent() { cudaEventCreate(&event); }
    ~CudaEvent() {
      if (event) cudaEventDestroy(event);
    }
  };
  struct SideEnergy {
    double millijoules_per_call = 0, batch_ms = 0, watts = 0;
    uint64_t calls = 0;
    uint32_t updates = 0;
  };

  CudaSandboxDevice() = default;

  static std::string cuda_error_text(cudaError_t status);
  // Free device memory now (cudaMemGetInfo); nullopt when it cannot be read (a dead context: the
  // next synchronisation reports that).
  static std::optional<size_t> free_device_bytes();
  // A CUDA error in a timed call: the reply says which, and the sandbox exits after sending it.
  static void device_error(msg::SandboxReply::Builder reply, const Error& error);
  // drk_kernel's non-zero status in a call the harness made `when` ("in a timed call").
  static void returned_error(msg::SandboxReply::Builder reply, int status, const std::string& when);

  // What the first requests would otherwise wait for, done as the sandbox starts, before its
  // candidate is known and before its syscall filter: LibTorch CUDA's lazy set-up and cuBLAS's
  // handle, so that neither is charged to a candidate's first call.
  void warm_up();
  // Marks the device broken; the error says what failed `when`.
  Error latch(const std::string& when, cudaError_t status);
  // CUPTI could not switch the trace: its state is unknown, so no later call's timing can be
  // trusted; the sandbox is replaced.
  void trace_failed(msg::SandboxReply::Builder reply, const Error& error);

  // Where the tensor at a region offset lives on the device (tensor_data made it).
  void* device_address(uint64_t offset);
  void detach_region();
  // What the workspace may hand out this call: the limit less what the candidate holds besides
  // the workspace's own block.
  size_t workspace_budget() const;
  // The candidate's device memory: what free memory lost over its calls (its cudaMalloc'd
  // buffers, module globals, its workspace). Memory taken and given back within one call is not
  // seen; on a shared card another process's allocations in the window count too (docs/gpu.md).
  void account_memory(std::optional<size_t> free_before, const char* when);
  // When the candidate went over the memory limit: answers MEMORY_LIMIT and returns true.
  bool answered_memory_limit(msg::SandboxReply::Builder reply) const;
  // One call of the loaded candidate on `set`, within its workspace budget, on copies of the
  // set's tensor arrays (the candidate's to write; the harness's stay as they are), kept in
  // members so that a timed call allocates nothing. drk_kernel's status.
  int call_candidate(CandidateCalls& calls, size_t set) { return call_kernel(calls.kernel, calls, set); }
  int call_kernel(drk_kernel_fn kernel, CandidateCalls& calls, size_t set);

  // The reference side of a time or energy request: `call(set)` runs it once on a set's inputs.
  // It is the request's LibTorch expression over the candidate's input buffers (device memory it
  // reads), on LibTorch's current stream (the legacy default stream), or a KernelBench problem's
  // Model beside the candidate (CandidateCalls::reference_kernel), called as the candidate is, on
  // its stream. nullopt with a badRequest reply when it cannot run here.
  struct ReferenceSide {
    std::function<Status(size_t set)> call;
    cudaStream_t stream = nullptr;
  };
  std::optional<ReferenceSide> reference_side(msg::ReferenceSpec::Reader spec, CandidateCalls& calls,
                                              msg::SandboxReply::Builder reply);
  // The parsed reference, kept while the request's expression stays the same.
  Result<const kernels::Reference*> reference_for(msg::ReferenceSpec::Reader spec);
  // Tensors over the candidate's input buffers of every set, with the dtypes the Evaluator wrote
  // them in; false with a badRequest reply when LibTorch cannot use them.
  bool reference_inputs_for(const CandidateCalls& calls, std::vector<std::vector<at::Tensor>>& inputs,
                            msg::SandboxReply::Builder reply);

  // The device's time between two events with nothing between them, behind the hold: what every
  // held call's events cost beyond its work (1.3 us on the H200). The median of a few windows.
  Result<double> held_event_floor_us(CudaEvent& start, CudaEvent& end);
  // The launch hold (and end marker), built at the first time request that asks for one or has
  // profiled calls; false when it cannot be built (hold_error_ says why).
  bool build_launch_hold();
  // build_launch_hold() for timed calls held as asked: the reply's note says why not.
  bool launch_hold(msg::SandboxReply::Builder reply);
  void reset_l2_state();
  // input_swaps.h's swaps on device memory, through the host (a few bytes, between calls).
  Status swap_device_inputs(const std::vector<drk_tensor>& inputs, uint64_t seed, uint64_t call);

  // One side's calls back to back between two updates of NVML's energy counter; `call` runs one
  // call and returns false (having filled the reply) when the request must end.
  Result<std::optional<SideEnergy>> energy_of(const std::function<bool()>& call, uint32_t min_ms,
                                               msg::SandboxReply::Builder reply);

  cudaStream_t stream_ = nullptr;
  void* mirror_ = nullptr;
  size_t mirror_bytes_ = 0;
  bool separate_ = false;  // SandboxDeviceOptions::separate_allocations
  std::map<uint64_t, std::pair<void*, uint64_t>> tensors_;  // by region offset: address, bytes
  uint8_t* attached_ = nullptr;  // the Evaluator's device memory (attach_region), when lent
  uint64_t attached_bytes_ = 0;
  cudaIpcMemHandle_t attached_handle_{};
  uint8_t* host_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  size_t l2_bytes_ = 0;
  std::string name_;
  std::string pci_bus_id_;
  bool broken_ = false;
  uint64_t memory_limit_ = 0;  // 0: none
  uint64_t held_ = 0;          // device memory the loaded candidate holds now
  uint64_t peak_held_ = 0;
  bool over_limit_ = false;
  std::string limit_message_;
  std::optional<size_t> free_before_;
  std::unique_ptr<cuda::NvmlEnergy> nvml_;
  std::string nvml_unavailable_;  // why nvml_ is null once it was tried
  DeviceWorkspace workspace_;
  std::unique_ptr<cuda::KernelTrace> trace_;
  std::optional<cuda::LaunchHold> hold_;
  std::string hold_error_;  // why hold_ could not be built
  std::vector<drk_tensor> call_inputs_, call_outputs_;  // call_kernel()'s copies
  std::optional<cuda::DeviceKernels> peak_kernels_;  // built by the first peaks request
  std::string peak_kernels_error_;                  // why they could not be
  std::optional<kernels::Reference> reference_;
  std::string reference_key_;
  uint64_t calls_by_side_[2] = {0, 0};  // rotates the sets across requests
  uint64_t flushes_ = 0;
};

}  // namespace drk::evaluator
