#include "actors/evaluator/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

namespace drk::evaluator::cuda {

Result<DeviceInfo> query_device(int ordinal) {
  int count = 0;
  if (const auto status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    return make_error(Errc::unsupported, std::string("no usable CUDA device: ") +
                                             cudaGetErrorString(status));
  }
  if (ordinal < 0 || ordinal >= count) {
    return make_error(Errc::unsupported, "CUDA device " + std::to_string(ordinal) +
                                             " does not exist (" + std::to_string(count) +
                                             " visible)");
  }
  cudaDeviceProp properties{};
  if (const auto status = cudaGetDeviceProperties(&properties, ordinal); status != cudaSuccess) {
    return make_error(Errc::unsupported, std::string("cannot read CUDA device properties: ") +
                                             cudaGetErrorString(status));
  }
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = properties.name;
  info.compute_major = properties.major;
  info.compute_minor = properties.minor;
  info.multiprocessors = properties.multiProcessorCount;
  info.global_memory_bytes = static_cast<int64_t>(properties.totalGlobalMem);
  info.l2_cache_bytes = properties.l2CacheSize;
  info.persisting_l2_max_bytes = properties.persistingL2CacheMaxSize;
  return info;
}

}  // namespace drk::evaluator::cuda
