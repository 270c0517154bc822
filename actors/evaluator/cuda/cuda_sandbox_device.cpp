#include "actors/evaluator/cuda/cuda_sandbox_device.h"

#include <signal.h>

#include <algorithm>
#include <cstring>

namespace drk::evaluator {
namespace {

constexpr size_t kMaxWorkspaceBytes = size_t{16} << 30;

std::string mebibytes(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

DeviceWorkspace* active_workspace = nullptr;

void* device_workspace_for(const drk_context*, size_t bytes) {
  return active_workspace ? active_workspace->allocate(bytes) : nullptr;
}

}  // namespace

std::string CudaSandboxDevice::cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

std::optional<size_t> CudaSandboxDevice::free_device_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return std::nullopt;
  return free_bytes;
}

void CudaSandboxDevice::device_error(msg::SandboxReply::Builder reply, const Error& error) {
  reply.setStatus(msg::SandboxStatus::CUDA_ERROR);
  reply.setMessage(error.message);
}

void CudaSandboxDevice::returned_error(msg::SandboxReply::Builder reply, int status, const std::string& when) {
  reply.setStatus(msg::SandboxStatus::RETURNED_ERROR);
  reply.setCandidateStatus(status);
  reply.setMessage("drk_kernel returned " + std::to_string(status) + " " + when);
}

std::unique_ptr<SandboxDevice> CudaSandboxDevice::create(const SandboxDeviceOptions& options, std::string& error) {
  // CUDA's libraries (NVRTC, the driver's caches) try to write files, and RLIMIT_FSIZE = 0
  // turns that into SIGXFSZ. Ignored, the write fails with EFBIG and they carry on; the
  // limit still lets no file grow.
  signal(SIGXFSZ, SIG_IGN);
  int count = 0;
  if (auto status = cudaGetDeviceCount(&count); status != cudaSuccess || count == 0) {
    error = "drk-sandbox-cuda has no usable CUDA device: " +
            (status != cudaSuccess ? cuda_error_text(status) : std::string("no device is visible"));
    return nullptr;
  }
  std::unique_ptr<CudaSandboxDevice> device(new CudaSandboxDevice());
  device->memory_limit_ = options.memory_limit_bytes;
  device->separate_ = options.separate_allocations;
  auto fail = [&](const std::string& what, cudaError_t status) {
    error = "drk-sandbox-cuda cannot start: " + what + ": " + cuda_error_text(status);
    return nullptr;
  };
  if (auto status = cudaSetDevice(0); status != cudaSuccess) return fail("cudaSetDevice", status);
  if (auto status = cudaFree(nullptr); status != cudaSuccess) return fail("creating the context", status);
  if (auto status = cudaStreamCreateWithFlags(&device->stream_, cudaStreamDefault); status != cudaSuccess)
    return fail("creating the candidate's stream", status);
  int l2_bytes = 0;
  cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0);
  device->l2_bytes_ = static_cast<size_t>(std::max(l2_bytes, 1 << 20));
  device->flush_bytes_ = 2 * device->l2_bytes_;
  if (auto status = cudaMalloc(&device->flush_, device->flush_bytes_); status != cudaSuccess)
    return fail("allocating the L2 flush buffer", status);
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  device->name_ = properties.name;
  char bus_id[64] = {};
  if (auto status = cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0); status == cudaSuccess) device->pci_bus_id_ = bus_id;
  // Under compute-sanitizer (the only user of separate allocations) CUPTI is the sanitizer's:
  // that sandbox loads and runs, it never times (sandbox_main.cpp refuses the other requests).
  if (!device->separate_) {
    auto trace = cuda::KernelTrace::start();
    if (!trace) {
      error = "drk-sandbox-cuda cannot trace kernels: " + trace.error().message;
      return nullptr;
    }
    device->trace_ = std::move(*trace);
    // Started once here (CUPTI prepares its instrumentation as modules load) and off except
    // around the profiled calls of a time request and the naming call of a metrics request.
    if (auto paused = device->trace_->pause(); !paused) {
      error = "drk-sandbox-cuda cannot pause its kernel trace: " + paused.error().message;
      return nullptr;
    }
    device->warm_up();
  }
  active_workspace = &device->workspace_;
  return device;
}

CudaSandboxDevice::~CudaSandboxDevice() {
  active_workspace = nullptr;
  detach_region();
  if (mirror_) cudaFree(mirror_);
  for (const auto& [offset, tensor] : tensors_) cudaFree(tensor.first);
  if (flush_) cudaFree(flush_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaSandboxDevice::warm_up() {
  try {
    const auto a = at::ones({64, 64}, at::TensorOptions().device(at::kCUDA));
    (void)at::matmul(a, a).sum().item<float>();
  } catch (const std::exception&) {
  }
}

Status CudaSandboxDevice::mirror_region(uint8_t* host, size_t bytes) {
  host_ = host;
  if (separate_ || bytes == mirror_bytes_) return {};
  if (mirror_) cudaFree(mirror_);
  mirror_ = nullptr;
  mirror_bytes_ = 0;
  if (bytes == 0) return {};
  if (auto status = cudaMalloc(&mirror_, bytes); status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, "cannot allocate " + std::to_string(bytes) +
                                                    " bytes of device memory for the tensors: " + cuda_error_text(status));
  }
  mirror_bytes_ = bytes;
  return {};
}

Status CudaSandboxDevice::attach_region(const uint8_t* handle, size_t handle_bytes, uint64_t bytes) {
  if (handle_bytes == 0) {
    detach_region();
    return {};
  }
  if (separate_)
    return make_error(Errc::invalid_argument,
                      "this sandbox gives every tensor an allocation of its own (--separate-allocations): "
                      "it cannot use the Evaluator's device memory");
  if (handle_bytes != sizeof(cudaIpcMemHandle_t))
    return make_error(Errc::invalid_argument, "a device region handle has " + std::to_string(handle_bytes) +
                                                  " bytes instead of cudaIpcMemHandle_t's " +
                                                  std::to_string(sizeof(cudaIpcMemHandle_t)));
  if (attached_ && bytes == attached_bytes_ && std::memcmp(&attached_handle_, handle, handle_bytes) == 0) return {};
  detach_region();
  cudaIpcMemHandle_t ipc;
  std::memcpy(&ipc, handle, sizeof ipc);
  void* base = nullptr;
  if (auto status = cudaIpcOpenMemHandle(&base, ipc, cudaIpcMemLazyEnablePeerAccess); status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, std::string("cannot open the Evaluator's device memory (cudaIpcOpenMemHandle: ") +
                                          cuda_error_text(status) + ")");
  }
  attached_ = static_cast<uint8_t*>(base);
  attached_bytes_ = bytes;
  attached_handle_ = ipc;
  return {};
}

void* CudaSandboxDevice::tensor_data(uint64_t offset, uint64_t bytes) {
  if (attached_) return attached_ + offset;
  if (!separate_) return static_cast<uint8_t*>(mirror_) + offset;
  auto found = tensors_.find(offset);
  if (found != tensors_.end() && found->second.second == bytes) return found->second.first;
  if (found != tensors_.end()) {
    cudaFree(found->second.first);
    tensors_.erase(found);
  }
  void* data = nullptr;
  if (cudaMalloc(&data, std::max<uint64_t>(bytes, 1)) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  tensors_[offset] = {data, bytes};
  return data;
}

void* CudaSandboxDevice::device_address(uint64_t offset) {
  if (attached_) return attached_ + offset;
  return separate_ ? tensors_.at(offset).first : static_cast<uint8_t*>(mirror_) + offset;
}

void CudaSandboxDevice::detach_region() {
  if (attached_) cudaIpcCloseMemHandle(attached_);
  attached_ = nullptr;
  attached_bytes_ = 0;
}

void CudaSandboxDevice::prepare_context(drk_context& context) {
  context.device = DRK_CUDA;
  context.stream = stream_;
  context.workspace = &device_workspace_for;
}

void CudaSandboxDevice::begin_candidate() {
  workspace_.release();
  held_ = 0;
  peak_held_ = 0;
  over_limit_ = false;
  limit_message_.clear();
}

void CudaSandboxDevice::begin_call() {
  free_before_ = free_device_bytes();
  workspace_.begin_call(workspace_budget());
}

void CudaSandboxDevice::end_call() {
  workspace_.end_call();
  account_memory(free_before_, "a call");
}

size_t CudaSandboxDevice::workspace_budget() const {
  if (memory_limit_ == 0) return kMaxWorkspaceBytes;
  uint64_t others = held_ > workspace_.capacity() ? held_ - workspace_.capacity() : 0;
  return others >= memory_limit_ ? 0 : std::min(static_cast<size_t>(memory_limit_ - others), kMaxWorkspaceBytes);
}

void CudaSandboxDevice::account_memory(std::optional<size_t> free_before, const char* when) {
  auto free_after = free_device_bytes();
  if (!free_before || !free_after) return;
  int64_t held = static_cast<int64_t>(held_) + static_cast<int64_t>(*free_before) - static_cast<int64_t>(*free_after);
  held_ = held > 0 ? static_cast<uint64_t>(held) : 0;
  peak_held_ = std::max(peak_held_, held_);
  if (memory_limit_ > 0 && held_ > memory_limit_ && !over_limit_) {
    over_limit_ = true;
    limit_message_ = "the candidate held " + mebibytes(held_) + " of device memory after " + when +
                     ", over its limit of " + mebibytes(memory_limit_) +
                     " (eval.gpu_memory_limit_mb): allocations that outlive a call count, the workspace included";
  }
}

bool CudaSandboxDevice::answered_memory_limit(msg::SandboxReply::Builder reply) const {
  if (!over_limit_) return false;
  reply.setStatus(msg::SandboxStatus::MEMORY_LIMIT);
  reply.setMessage(limit_message_);
  return true;
}

int CudaSandboxDevice::call_kernel(drk_kernel_fn kernel, CandidateCalls& calls, size_t set) {
  call_inputs_ = calls.inputs[set];
  call_outputs_ = calls.outputs[set];
  workspace_.begin_call(workspace_budget());
  const int status = kernel(&calls.context, call_inputs_.data(), static_cast<int32_t>(call_inputs_.size()),
                                  call_outputs_.data(), static_cast<int32_t>(call_outputs_.size()));
  workspace_.end_call();
  return status;
}

Status CudaSandboxDevice::copy_to_device(const std::vector<RegionRange>& ranges) {
  if (attached_) return {};
  for (const auto& range : ranges)
    if (auto status = cudaMemcpy(device_address(range.offset), host_ + range.offset, range.bytes,
                                 cudaMemcpyHostToDevice);
        status != cudaSuccess)
      return latch("copying the tensors to the device", status);
  return {};
}

Status CudaSandboxDevice::copy_to_host(const std::vector<RegionRange>& ranges) {
  if (attached_) return {};
  for (const auto& range : ranges)
    if (auto status = cudaMemcpy(host_ + range.offset, device_address(range.offset), range.bytes,
                                 cudaMemcpyDeviceToHost);
        status != cudaSuccess)
      return latch("copying the tensors back from the device", status);
  return {};
}

Status CudaSandboxDevice::synchronize() {
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess)
    return latch("after the candidate's calls", status);
  // A launch that failed without running (a bad configuration) is reported here.
  if (auto status = cudaGetLastError(); status != cudaSuccess) return latch("a launch of the candidate", status);
  return {};
}

void CudaSandboxDevice::end() {
  // Errors here change nothing: every answer was given, and the process exits next.
  (void)cudaDeviceSynchronize();
  (void)cudaDeviceReset();
}

Error CudaSandboxDevice::latch(const std::string& when, cudaError_t status) {
  broken_ = true;
  return make_error(Errc::sandbox_crashed, "CUDA error " + when + ": " + cuda_error_text(status));
}

void CudaSandboxDevice::trace_failed(msg::SandboxReply::Builder reply, const Error& error) {
  device_error(reply, make_error(Errc::sandbox_crashed, error.message));
  broken_ = true;
}

std::unique_ptr<SandboxDevice> make_sandbox_device(const SandboxDeviceOptions& options, std::string& error) {
  return CudaSandboxDevice::create(options, error);
}

bool sandbox_runs_on_device() { return true; }

}  // namespace drk::evaluator
