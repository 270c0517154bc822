#include "actors/evaluator/cuda/device_kernels.h"

#include <utility>

#include "actors/evaluator/cuda/nvrtc_compiler.h"

namespace drk::evaluator::cuda {

Result<DeviceKernels> DeviceKernels::build(const std::string& source, const std::string& source_name,
                                           std::initializer_list<const char*> names) {
  int device = 0, major = 0, minor = 0;
  if (auto status = cudaGetDevice(&device); status != cudaSuccess ||
                                            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) !=
                                                cudaSuccess ||
                                            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) !=
                                                cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, "cannot build " + source_name + ": no usable CUDA device");
  }
  NvrtcOptions options;
  options.architecture = "sm_" + std::to_string(major) + std::to_string(minor);
  options.source_name = source_name;
  options.line_info = false;
  auto binary = compile_cuda(source, options);
  if (!binary) return binary.error();
  DeviceKernels kernels;
  if (auto status = cudaLibraryLoadData(&kernels.library_, binary->cubin.data(), nullptr, nullptr, 0, nullptr,
                                        nullptr, 0);
      status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, "cannot load " + source_name + ": " + cudaGetErrorString(status));
  }
  for (const char* name : names) {
    cudaKernel_t kernel = nullptr;
    if (auto status = cudaLibraryGetKernel(&kernel, kernels.library_, name); status != cudaSuccess) {
      cudaGetLastError();
      return make_error(Errc::io_error,
                        source_name + " has no kernel " + name + ": " + cudaGetErrorString(status));
    }
    kernels.kernels_[name] = kernel;
  }
  return kernels;
}

DeviceKernels::DeviceKernels(DeviceKernels&& other) noexcept
    : library_(std::exchange(other.library_, nullptr)), kernels_(std::move(other.kernels_)) {}

DeviceKernels& DeviceKernels::operator=(DeviceKernels&& other) noexcept {
  if (this != &other) {
    if (library_) cudaLibraryUnload(library_);
    library_ = std::exchange(other.library_, nullptr);
    kernels_ = std::move(other.kernels_);
  }
  return *this;
}

DeviceKernels::~DeviceKernels() {
  if (library_) cudaLibraryUnload(library_);
}

const void* DeviceKernels::kernel(const std::string& name) const {
  auto found = kernels_.find(name);
  return found == kernels_.end() ? nullptr : reinterpret_cast<const void*>(found->second);
}

}  // namespace drk::evaluator::cuda
