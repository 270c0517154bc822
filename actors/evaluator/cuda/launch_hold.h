// LaunchHold: keeps a stream from running what is queued on it until the host releases it, so
// that a timed call's CUDA events measure the device's work and not the host's launch latency
// (the "blocking kernel" of NVIDIA's nvbench). One spinning thread of the harness's own kernel
// is queued on the stream, the call's start event, work and end event are queued behind it,
// and release() lets them all run back to back.
//
// The hold gives up by itself after `timeout` (globaltimer), so that a call that waits on the
// device inside itself (a cudaStreamSynchronize on a stream behind the hold, a synchronous copy,
// a device memory allocation: CUDA's implicit synchronisation; the first launch of a kernel,
// whose module CUDA loads lazily) is delayed, never deadlocked; timed_out() then says the call's events included the host's
// time after the hold ended, and the caller times that evaluation without holds.
//
// The flag words live in pinned, mapped host memory of this object (RAII). The hold kernel is
// the harness's, compiled with NVRTC at create(); CUPTI sees it, and begin() returns only once
// it runs on the device, so a window opened after begin() never contains its start.
//
// The same library holds the end marker (kEndMarkerKernel): an empty kernel that a profiled call
// queues on its stream after its end event. CUPTI's record of the marker's start is when the
// stream passed the call's end; a kernel the stream waited for has ended by then, so one of the
// candidate's that ends later was left running on a stream the call never joined, however short.
//
// Thread-safety: one thread (the sandbox's); not copyable.
// Errors: create() fails (compile_error, io_error) when the kernels cannot be built or the flag
// memory cannot be mapped; begin() fails (timeout, io_error) when the hold does not start on
// the device within a second or cannot be launched -- the caller then times without holds;
// mark_end() fails (io_error) when the marker cannot be launched.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>

#include "actors/evaluator/cuda/device_kernels.h"
#include "base/result.h"

namespace drk::evaluator::cuda {

class LaunchHold {
 public:
  static Result<LaunchHold> create(std::chrono::milliseconds timeout = std::chrono::milliseconds(50));

  LaunchHold(LaunchHold&&) noexcept = default;
  LaunchHold& operator=(LaunchHold&&) noexcept = default;
  ~LaunchHold();

  // Queues the hold on `stream` and waits until it runs.
  Status begin(cudaStream_t stream);
  // Lets the stream go on. Idempotent.
  void release();
  // After the stream was synchronised: whether the hold gave up before release().
  bool timed_out() const;
  // Queues the end marker on `stream`.
  Status mark_end(cudaStream_t stream) const;

  static constexpr const char* kEndMarkerKernel = "drk_end_marker";

 private:
  struct HostWords;
  LaunchHold(DeviceKernels kernels, HostWords* words, unsigned* device_words, std::chrono::milliseconds timeout)
      : kernels_(std::move(kernels)), words_(words), device_words_(device_words), timeout_(timeout) {}

  DeviceKernels kernels_;
  struct FreeHost {
    void operator()(HostWords* words) const;
  };
  std::unique_ptr<HostWords, FreeHost> words_;
  unsigned* device_words_ = nullptr;
  std::chrono::milliseconds timeout_;
};

}  // namespace drk::evaluator::cuda
