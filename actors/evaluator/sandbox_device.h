// SandboxDevice: what drk-sandbox does differently when candidates run on an accelerator. The
// sandbox program (sandbox_main.cpp) is one source; the executable picks its device at link
// time through make_sandbox_device(): drk-sandbox links sandbox_host_device.cpp (candidates
// run on the CPU, on the shared region itself: no device), drk-sandbox-cuda links
// cuda/cuda_sandbox_device.cpp.
//
// On a device the shared region is mirrored in device memory: a tensor at region offset X is
// handed to the candidate at device address base + X. A run request copies the tensors it
// names to the device before its calls and back after them (outputs for the correctness check,
// inputs for the mutation check).
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

#include "drk_kernel.h"
#include "messages/sandbox.capnp.h"
#include "runtime/result.h"

namespace drk::evaluator {

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
};

class SandboxDevice {
 public:
  virtual ~SandboxDevice() = default;
  // The region is (re)mapped at `host`; device memory follows its size.
  virtual Status mirror_region(uint8_t* host, size_t bytes) = 0;
  virtual void* tensor_data(uint64_t offset) = 0;
  // device, stream and workspace of drk_context.
  virtual void prepare_context(drk_context& context) = 0;
  virtual void begin_call() = 0;  // workspace bookkeeping around each call
  virtual void end_call() = 0;
  virtual Status copy_to_device(const std::vector<RegionRange>& ranges) = 0;
  virtual Status copy_to_host(const std::vector<RegionRange>& ranges) = 0;
  // Waits for all work on the device; reports (and latches) a device error.
  virtual Status synchronize() = 0;
  virtual void time(msg::TimeRequest::Reader request, CandidateCalls& calls, msg::SandboxReply::Builder reply) = 0;
  virtual void measure_peaks(msg::SandboxReply::Builder reply) = 0;
  virtual bool broken() const = 0;
};

// nullptr for the host sandbox; `error` says why a device sandbox cannot start.
std::unique_ptr<SandboxDevice> make_sandbox_device(std::string& error);

}  // namespace drk::evaluator
