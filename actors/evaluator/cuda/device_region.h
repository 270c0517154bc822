// DeviceRegion: device memory that the Evaluator owns and lends to its CUDA sandbox, so that
// inputs are drawn, outputs poisoned and checked on the GPU where they are computed (docs/gpu.md,
// "Device-resident checks"). One cudaMalloc allocation on the current device, exported with a
// CUDA IPC handle that the sandbox opens (cudaIpcOpenMemHandle); the sandbox sees this allocation
// and nothing else of the Evaluator's: pristine inputs and reference outputs live in other
// allocations that are never exported.
//
// Thread-safety: not thread-safe; owned by one EvaluationEngine.
// Ownership: move-only RAII; the destructor frees the allocation. Free it only when no sandbox
// maps it any more (the engine keeps a replaced region until its sandbox has moved on).
// Errors: io_error naming the size and the fix when the device has not that much memory;
// unsupported when there is no usable device or the allocation cannot be exported.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/result.h"

namespace drk::evaluator::cuda {

class DeviceRegion {
 public:
  static constexpr size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)
  using IpcHandle = std::array<uint8_t, kIpcHandleBytes>;

  static Result<DeviceRegion> create(size_t bytes);
  DeviceRegion(DeviceRegion&& other) noexcept;
  DeviceRegion& operator=(DeviceRegion&& other) noexcept;
  DeviceRegion(const DeviceRegion&) = delete;
  DeviceRegion& operator=(const DeviceRegion&) = delete;
  ~DeviceRegion();

  uint8_t* data() const { return data_; }  // a device address
  size_t size() const { return size_; }
  const IpcHandle& ipc_handle() const { return handle_; }

 private:
  DeviceRegion() = default;
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  IpcHandle handle_{};
};

// Waits for the work this process queued on the device (LibTorch's draws and poison on the
// region) before the sandbox, another process, touches the same memory. sandbox_crashed with
// CUDA's error text when the device reports one.
Status synchronize_device();

}  // namespace drk::evaluator::cuda
