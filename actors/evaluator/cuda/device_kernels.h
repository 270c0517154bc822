// DeviceKernels: kernels of the harness's own (the peak kernels, the launch hold), compiled from
// source with NVRTC for the current device's architecture and loaded as a CUDA library. The
// library is unloaded with the object (RAII; move-only).
//
// Thread-safety: build() on the thread that owns the device's context; kernel() is const.
// Errors: compile_error with NVRTC's log; io_error without a usable device, when the runtime
// cannot load the binary, or finds no kernel of a requested name (the runtime's error text).
#pragma once

#include <cuda_runtime_api.h>

#include <initializer_list>
#include <map>
#include <string>

#include "base/result.h"

namespace drk::evaluator::cuda {

class DeviceKernels {
 public:
  // `names`: extern "C" kernels of `source`, looked up once.
  static Result<DeviceKernels> build(const std::string& source, const std::string& source_name,
                                     std::initializer_list<const char*> names);

  DeviceKernels(DeviceKernels&& other) noexcept;
  DeviceKernels& operator=(DeviceKernels&& other) noexcept;
  DeviceKernels(const DeviceKernels&) = delete;
  DeviceKernels& operator=(const DeviceKernels&) = delete;
  ~DeviceKernels();

  // For cudaLaunchKernel; nullptr for a name build() was not given.
  const void* kernel(const std::string& name) const;

 private:
  DeviceKernels() = default;

  cudaLibrary_t library_ = nullptr;
  std::map<std::string, cudaKernel_t> kernels_;
};

}  // namespace drk::evaluator::cuda
