#include "actors/evaluator/cuda/device_region.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <cuda_runtime_api.h>

namespace drk::evaluator::cuda {

static_assert(sizeof(cudaIpcMemHandle_t) == DeviceRegion::kIpcHandleBytes);

Result<DeviceRegion> DeviceRegion::create(size_t bytes) {
  DeviceRegion region;
  void* data = nullptr;
  if (auto status = cudaMalloc(&data, std::max<size_t>(bytes, 1)); status != cudaSuccess) {
    cudaGetLastError();
    const Errc code = status == cudaErrorMemoryAllocation ? Errc::io_error : Errc::unsupported;
    return make_error(code, "cannot allocate " + std::to_string(bytes >> 20) +
                                " MiB of device memory for the evaluation's tensors (" + cudaGetErrorString(status) +
                                "): evaluate at smaller shapes (eval.shapes: cpu), with fewer input sets "
                                "(eval.timing_sets) or fewer Evaluator workers on this GPU");
  }
  region.data_ = static_cast<uint8_t*>(data);
  region.size_ = bytes;
  cudaIpcMemHandle_t handle;
  if (auto status = cudaIpcGetMemHandle(&handle, data); status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::unsupported, std::string("cannot export device memory to the sandbox (cudaIpcGetMemHandle: ") +
                                             cudaGetErrorString(status) + "): set eval.device_resident: false");
  }
  std::memcpy(region.handle_.data(), &handle, sizeof handle);
  return region;
}

DeviceRegion::DeviceRegion(DeviceRegion&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), handle_(other.handle_) {}

DeviceRegion& DeviceRegion::operator=(DeviceRegion&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    handle_ = other.handle_;
  }
  return *this;
}

DeviceRegion::~DeviceRegion() { release(); }

void DeviceRegion::release() {
  if (data_) cudaFree(data_);
  data_ = nullptr;
  size_ = 0;
}

Status synchronize_device() {
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess)
    return make_error(Errc::io_error, std::string("the Evaluator's device work failed: ") +
                                                 cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  return {};
}

}  // namespace drk::evaluator::cuda
