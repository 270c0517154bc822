// SandboxDevice: what drk-sandbox does differently when candidates run on an accelerator. The
// sandbox program (sandbox_main.cpp) is one source; the executable picks its device at link
// time through make_sandbox_device(): drk-sandbox links sandbox_host_device.cpp (candidates
// run on the CPU, on the shared region itself: no device), drk-sandbox-cuda links the CUDA
// sandbox device (cuda/cuda_sandbox_device.h and its cuda_sandbox_*.cpp units).
//
// On a device the shared region is mirrored in device memory: a tensor at region offset X is
// handed to the candidate at device address base + X. A run request copies the tensors it
// names to the device before its calls and back after them (outputs for the correctness check,
// inputs for the mutation check). A request may instead lend the Evaluator's own device memory
// (attach_region, SandboxRequest.deviceRegion): offsets then point into it, and nothing is
// copied, because the Evaluator draws and checks on the device itself.
//
// measure_energy (NVML energy per call of both sides) and measure_metrics (one candidate call under
// CUPTI's Range Profiler) answer the CUDA-only requests of messages/sandbox.capnp; docs/gpu.md.
//
// Device memory limit (SandboxDeviceOptions::memory_limit_bytes, drk-sandbox-cuda
// --gpu-memory-limit-mb): the device measures the memory a candidate holds after each call and
// latches over_memory_limit() when it exceeds the limit; the sandbox answers memoryLimit and
// exits, which frees whatever the candidate kept (docs/gpu.md says what is and is not seen).
//
// Thread-safety: the sandbox's main thread only. Errors: a device error (CUDA's illegal
// address, device-side assert, launch failure) is Errc::sandbox_crashed and leaves the device
// broken(): the sandbox answers cudaError and exits, so that the error cannot reach the next
// evaluation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/evaluator/math_modes.h"
#include "drk_kernel.h"
#include "messages/sandbox.capnp.h"
#include "base/result.h"

namespace drk::evaluator {

// Bytes per element of a drk_dtype; 0 for a value that is none.
inline size_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
    case DRK_F32: case DRK_I32: return 4;
    case DRK_F16: case DRK_BF16: return 2;
    case DRK_F64: case DRK_I64: return 8;
    case DRK_F8E4M3: case DRK_F8E5M2: return 1;
    default: return 0;
  }
}

inline uint64_t tensor_elements(const drk_tensor& tensor) {
  uint64_t elements = 1;
  for (int d = 0; d < tensor.ndim; ++d) elements *= static_cast<uint64_t>(tensor.shape[d]);
  return elements;
}

// The bytes of a dense tensor: its elements times its dtype's size.
inline uint64_t tensor_bytes(const drk_tensor& tensor) { return tensor_elements(tensor) * dtype_bytes(tensor.dtype); }

struct SandboxDeviceOptions {
  uint64_t memory_limit_bytes = 0;  // 0: no limit
  // Each tensor in a device allocation of its own, exactly its size (drk-sandbox-cuda
  // --separate-allocations): for compute-sanitizer's memcheck, which sees accesses past the end of
  // an allocation, not past a tensor inside one.
  bool separate_allocations = false;
};

struct RegionRange {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// What a timed call of the candidate needs: its entry point, a context and the descriptors of
// every buffer set (device addresses), in the request's set order.
struct CandidateCalls {
  drk_kernel_fn kernel = nullptr;
  drk_context context{};
  std::vector<std::vector<drk_tensor>> inputs, outputs;
  // Checked after every candidate call, before the reference runs in this process again.
  MathModeWatch* math_modes = nullptr;
  // A KernelBench problem's Model, built in this sandbox before the candidate ran
  // (python_candidate.h): the timing reference, called as the candidate is, in place of the
  // request's LibTorch expression. nullptr for catalog tasks.
  drk_kernel_fn reference_kernel = nullptr;
};

class SandboxDevice {
 public:
  virtual ~SandboxDevice() = default;
  // The region is (re)mapped at `host`; device memory follows its size.
  virtual Status mirror_region(uint8_t* host, size_t bytes) = 0;
  // The Evaluator's device memory from a CUDA IPC handle of `handle_bytes` bytes, `bytes` long:
  // opened when the handle differs from the one attached, kept while requests repeat it; an
  // empty handle goes back to the mirror. io_error when the handle cannot be opened.
  virtual Status attach_region(const uint8_t* handle, size_t handle_bytes, uint64_t bytes) = 0;
  // The attached memory's size; 0 when tensors live in the mirror.
  virtual uint64_t attached_bytes() const = 0;
  // The device address of the `bytes`-long tensor at region offset `offset`; nullptr when device
  // memory for it cannot be had.
  virtual void* tensor_data(uint64_t offset, uint64_t bytes) = 0;
  // device, stream and workspace of drk_context.
  virtual void prepare_context(drk_context& context) = 0;
  virtual void begin_candidate() = 0;  // a new candidate was loaded: its memory count starts at 0
  virtual void begin_call() = 0;  // workspace and memory bookkeeping around each call
  virtual void end_call() = 0;
  virtual Status copy_to_device(const std::vector<RegionRange>& ranges) = 0;
  virtual Status copy_to_host(const std::vector<RegionRange>& ranges) = 0;
  // Waits for all work on the device; reports (and latches) a device error.
  virtual Status synchronize() = 0;
  virtual void time(msg::TimeRequest::Reader request, CandidateCalls& calls, msg::SandboxReply::Builder reply) = 0;
  virtual void measure_peaks(msg::SandboxReply::Builder reply) = 0;
  virtual void measure_energy(msg::EnergyRequest::Reader request, CandidateCalls& calls,
                              msg::SandboxReply::Builder reply) = 0;
  virtual void measure_metrics(CandidateCalls& calls, msg::SandboxReply::Builder reply) = 0;
  virtual bool broken() const = 0;
  // The last request was answered and the process leaves without its exit code (the candidate's
  // static destructors and exit handlers): waits for the device's work and destroys the context,
  // which completes compute-sanitizer's report of this process. Nothing may use the device after.
  virtual void end() = 0;
  // The most device memory the loaded candidate held after a call; whether it passed the limit,
  // and the reply's message when it did.
  virtual uint64_t candidate_memory_bytes() const = 0;
  virtual bool over_memory_limit() const = 0;
  virtual std::string memory_limit_message() const = 0;
};

// nullptr for the host sandbox; `error` says why a device sandbox cannot start.
std::unique_ptr<SandboxDevice> make_sandbox_device(const SandboxDeviceOptions& options, std::string& error);
// Whether this executable's candidates run on a device (drk-sandbox-cuda), known before any device
// is made: its zygote must start nothing that initialises CUDA, which no forked child could use.
bool sandbox_runs_on_device();

}  // namespace drk::evaluator
