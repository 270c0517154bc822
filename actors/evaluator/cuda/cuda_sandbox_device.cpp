// The CUDA device of drk-sandbox-cuda (sandbox_device.h): device memory mirroring the shared
// region, the candidate's stream and device workspace, timed calls (CUDA events, L2 flush,
// persisting-L2 reset; CUPTI records of the profiled calls only) of the candidate and of the
// task's LibTorch reference on the same device, the device's measured peaks, energy per call
// (NVML), and the candidate's device memory against its limit.
//
// Why a sibling executable rather than CUDA in drk-sandbox: the CPU sandbox must build and run
// where there is no CUDA toolkit or driver, starts in milliseconds without a CUDA context, and
// runs under an address-space limit that CUDA's reservations cannot live with; CUPTI's activity
// state is per process, so the process that times is the one that traces.
#include <cuda_runtime_api.h>
#include <signal.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "actors/evaluator/cuda/cupti_kernel_trace.h"
#include "actors/evaluator/cuda/cupti_range_profiler.h"
#include "actors/evaluator/cuda/nvml_energy.h"
#include "actors/evaluator/cuda/device_kernels.h"
#include "actors/evaluator/cuda/launch_hold.h"
#include "actors/evaluator/bump_workspace.h"
#include "actors/evaluator/input_swaps.h"
#include "actors/evaluator/sandbox_device.h"
#include "kernels/catalog/reference.h"

namespace drk::evaluator {
namespace {

constexpr size_t kMaxWorkspaceBytes = size_t{16} << 30;
// Energy: a batch is resolved when NVML's counter changed at least this often during it.
constexpr uint32_t kMinCounterUpdates = 3;
constexpr auto kCounterWait = std::chrono::milliseconds(500);  // for the first update
constexpr auto kEnergyGroup = std::chrono::milliseconds(2);     // calls per group (device time)
constexpr auto kEnergyOvertime = std::chrono::milliseconds(1000);

using Clock = std::chrono::steady_clock;

std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

std::string mebibytes(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

// The LibTorch dtype of a drk_dtype: reference inputs are made with the dtype the Evaluator
// drew them in (float32, int64 class indices, ...); nullopt for a value that is no drk_dtype.
static_assert(static_cast<int>(kernels::DType::float32) == DRK_F32 && static_cast<int>(kernels::DType::float16) == DRK_F16 &&
              static_cast<int>(kernels::DType::int64) == DRK_I64);
std::optional<at::ScalarType> scalar_type(int32_t dtype) {
  if (dtype < DRK_F32 || dtype > DRK_I64) return std::nullopt;
  return kernels::scalar_type_of(static_cast<kernels::DType>(dtype));
}

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

DeviceWorkspace* active_workspace = nullptr;

// Free device memory now (cudaMemGetInfo); nullopt when it cannot be read (a dead context: the
// next synchronisation reports that).
std::optional<size_t> free_device_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return std::nullopt;
  return free_bytes;
}

// A CUDA error in a timed call: the reply says which, and the sandbox exits after sending it.
void device_error(msg::SandboxReply::Builder reply, const Error& error) {
  reply.setStatus(msg::SandboxStatus::CUDA_ERROR);
  reply.setMessage(error.message);
}

// drk_kernel's non-zero status in a call the harness made `when` ("in a timed call").
void returned_error(msg::SandboxReply::Builder reply, int status, const std::string& when) {
  reply.setStatus(msg::SandboxStatus::RETURNED_ERROR);
  reply.setCandidateStatus(status);
  reply.setMessage("drk_kernel returned " + std::to_string(status) + " " + when);
}

void* device_workspace_for(const drk_context*, size_t bytes) {
  return active_workspace ? active_workspace->allocate(bytes) : nullptr;
}

// The peak kernels: compiled with NVRTC when the sandbox first measures (no nvcc at run time).
constexpr const char* kPeakSource = R"cu(
extern "C" __global__ void drk_peak_copy(const float4* __restrict__ in, float4* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
extern "C" __global__ void drk_peak_fma(float* out, int iterations, float a, float b) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  #pragma unroll 4
  for (int i = 0; i < iterations; ++i) {
    x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
  }
  float s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  if (s == 1234.5f) out[0] = s;  // keeps the chains alive; practically never true
}
)cu";

struct CudaEvent {
  cudaEvent_t event = nullptr;
  CudaEvent() { cudaEventCreate(&event); }
  ~CudaEvent() {
    if (event) cudaEventDestroy(event);
  }
};

class CudaSandboxDevice final : public SandboxDevice {
 public:
  static std::unique_ptr<SandboxDevice> create(const SandboxDeviceOptions& options, std::string& error) {
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

  ~CudaSandboxDevice() override {
    active_workspace = nullptr;
    detach_region();
    if (mirror_) cudaFree(mirror_);
    for (const auto& [offset, tensor] : tensors_) cudaFree(tensor.first);
    if (flush_) cudaFree(flush_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  Status mirror_region(uint8_t* host, size_t bytes) override {
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

  Status attach_region(const uint8_t* handle, size_t handle_bytes, uint64_t bytes) override {
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

  uint64_t attached_bytes() const override { return attached_ ? attached_bytes_ : 0; }

  void* tensor_data(uint64_t offset, uint64_t bytes) override {
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

  void prepare_context(drk_context& context) override {
    context.device = DRK_CUDA;
    context.stream = stream_;
    context.workspace = &device_workspace_for;
  }

  void begin_candidate() override {
    workspace_.release();
    held_ = 0;
    peak_held_ = 0;
    over_limit_ = false;
    limit_message_.clear();
  }
  void begin_call() override {
    free_before_ = free_device_bytes();
    workspace_.begin_call(workspace_budget());
  }
  void end_call() override {
    workspace_.end_call();
    account_memory(free_before_, "a call");
  }
  uint64_t candidate_memory_bytes() const override { return peak_held_; }
  bool over_memory_limit() const override { return over_limit_; }
  std::string memory_limit_message() const override { return limit_message_; }

  // When the candidate went over the memory limit: answers MEMORY_LIMIT and returns true.
  bool answered_memory_limit(msg::SandboxReply::Builder reply) const {
    if (!over_limit_) return false;
    reply.setStatus(msg::SandboxStatus::MEMORY_LIMIT);
    reply.setMessage(limit_message_);
    return true;
  }

  // Nothing to copy while the Evaluator's device memory is attached: it checks there itself.
  Status copy_to_device(const std::vector<RegionRange>& ranges) override {
    if (attached_) return {};
    for (const auto& range : ranges)
      if (auto status = cudaMemcpy(device_address(range.offset), host_ + range.offset, range.bytes,
                                   cudaMemcpyHostToDevice);
          status != cudaSuccess)
        return latch("copying the tensors to the device", status);
    return {};
  }

  Status copy_to_host(const std::vector<RegionRange>& ranges) override {
    if (attached_) return {};
    for (const auto& range : ranges)
      if (auto status = cudaMemcpy(host_ + range.offset, device_address(range.offset), range.bytes,
                                   cudaMemcpyDeviceToHost);
          status != cudaSuccess)
        return latch("copying the tensors back from the device", status);
    return {};
  }

  Status synchronize() override {
    if (auto status = cudaDeviceSynchronize(); status != cudaSuccess)
      return latch("after the candidate's calls", status);
    // A launch that failed without running (a bad configuration) is reported here.
    if (auto status = cudaGetLastError(); status != cudaSuccess) return latch("a launch of the candidate", status);
    return {};
  }

  bool broken() const override { return broken_; }

  void time(msg::TimeRequest::Reader request, CandidateCalls& calls, msg::SandboxReply::Builder reply) override;
  Result<double> held_event_floor_us(CudaEvent& start, CudaEvent& end);
  void warm_up();
  // One call of the loaded candidate on `set`, within its workspace budget, on copies of the
  // set's tensor arrays (the candidate's to write; the harness's stay as they are), kept in
  // members so that a timed call allocates nothing. drk_kernel's status.
  int call_candidate(CandidateCalls& calls, size_t set) {
    call_inputs_ = calls.inputs[set];
    call_outputs_ = calls.outputs[set];
    workspace_.begin_call(workspace_budget());
    const int status = calls.kernel(&calls.context, call_inputs_.data(), static_cast<int32_t>(call_inputs_.size()),
                                    call_outputs_.data(), static_cast<int32_t>(call_outputs_.size()));
    workspace_.end_call();
    return status;
  }
  void trace_failed(msg::SandboxReply::Builder reply, const Error& error);
  void measure_peaks(msg::SandboxReply::Builder reply) override;
  void measure_energy(msg::EnergyRequest::Reader request, CandidateCalls& calls,
                      msg::SandboxReply::Builder reply) override;
  void measure_metrics(CandidateCalls& calls, msg::SandboxReply::Builder reply) override;

 private:
  CudaSandboxDevice() = default;

  // Where the tensor at a region offset lives on the device (tensor_data made it).
  void* device_address(uint64_t offset) {
    if (attached_) return attached_ + offset;
    return separate_ ? tensors_.at(offset).first : static_cast<uint8_t*>(mirror_) + offset;
  }

  void detach_region() {
    if (attached_) cudaIpcCloseMemHandle(attached_);
    attached_ = nullptr;
    attached_bytes_ = 0;
  }

  // What the workspace may hand out this call: the limit less what the candidate holds besides
  // the workspace's own block.
  size_t workspace_budget() const {
    if (memory_limit_ == 0) return kMaxWorkspaceBytes;
    uint64_t others = held_ > workspace_.capacity() ? held_ - workspace_.capacity() : 0;
    return others >= memory_limit_ ? 0 : std::min(static_cast<size_t>(memory_limit_ - others), kMaxWorkspaceBytes);
  }

  // The candidate's device memory: what free memory lost over its calls (its cudaMalloc'd
  // buffers, module globals, its workspace). Memory taken and given back within one call is not
  // seen; on a shared card another process's allocations in the window count too (docs/gpu.md).
  void account_memory(std::optional<size_t> free_before, const char* when) {
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

  // Tensors over the candidate's input buffers of every set, with the dtypes the Evaluator wrote
  // them in; false with a badRequest reply when LibTorch cannot use them.
  bool reference_inputs_for(const CandidateCalls& calls, std::vector<std::vector<at::Tensor>>& inputs,
                            msg::SandboxReply::Builder reply) {
    inputs.assign(calls.inputs.size(), {});
    try {
      for (size_t s = 0; s < calls.inputs.size(); ++s)
        for (const auto& tensor : calls.inputs[s]) {
          auto type = scalar_type(tensor.dtype);
          if (!type) {
            reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
            reply.setMessage("an input has dtype " + std::to_string(tensor.dtype) + ", which LibTorch has no type for");
            return false;
          }
          auto options = at::TensorOptions().dtype(*type).device(at::kCUDA, 0);
          inputs[s].push_back(
              at::from_blob(tensor.data, at::IntArrayRef(tensor.shape, static_cast<size_t>(tensor.ndim)), options));
        }
    } catch (const c10::Error& e) {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage(std::string("LibTorch cannot use the CUDA device: ") + e.what_without_backtrace());
      return false;
    }
    return true;
  }

  struct SideEnergy {
    double millijoules_per_call = 0, batch_ms = 0, watts = 0;
    uint64_t calls = 0;
    uint32_t updates = 0;
  };
  // One side's calls back to back between two updates of NVML's energy counter; `call` runs one
  // call and returns false (having filled the reply) when the request must end.
  Result<std::optional<SideEnergy>> energy_of(const std::function<bool()>& call, uint32_t min_ms,
                                               msg::SandboxReply::Builder reply);

  Error latch(const std::string& when, cudaError_t status) {
    broken_ = true;
    return make_error(Errc::sandbox_crashed, "CUDA error " + when + ": " + cuda_error_text(status));
  }

  // input_swaps.h's swaps on device memory, through the host (a few bytes, between calls).
  Status swap_device_inputs(const std::vector<drk_tensor>& inputs, uint64_t seed, uint64_t call) {
    for (uint32_t t = 0; t < inputs.size(); ++t) {
      const size_t bytes = dtype_bytes(inputs[t].dtype);
      const SwapPositions at = swap_positions(seed, call, t, tensor_elements(inputs[t]));
      if (bytes == 0 || at.first == at.second) continue;
      auto* base = static_cast<unsigned char*>(inputs[t].data);
      unsigned char first[8], second[8];
      for (auto [to, from] : {std::pair{first, base + at.first * bytes}, std::pair{second, base + at.second * bytes}})
        if (auto status = cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToHost); status != cudaSuccess)
          return latch("swapping input elements between timed calls", status);
      for (auto [to, from] : {std::pair{base + at.first * bytes, second}, std::pair{base + at.second * bytes, first}})
        if (auto status = cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice); status != cudaSuccess)
          return latch("swapping input elements between timed calls", status);
    }
    return {};
  }

  // The request's reference and tensors over the candidate's input buffers of every set, which it
  // reads (device memory); nullptr with a badRequest reply when either cannot be had.
  const kernels::Reference* reference_over_inputs(msg::ReferenceSpec::Reader spec, const CandidateCalls& calls,
                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                  msg::SandboxReply::Builder reply) {
    auto reference = reference_for(spec);
    if (!reference) {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage("the reference cannot be evaluated here: " + reference.error().message);
      return nullptr;
    }
    return reference_inputs_for(calls, inputs, reply) ? *reference : nullptr;
  }

  // The parsed reference, kept while the request's expression stays the same.
  Result<const kernels::Reference*> reference_for(msg::ReferenceSpec::Reader spec) {
    std::string key = spec.getExpression();
    for (auto name : spec.getInputNames()) key += std::string("\n") + name.cStr();
    if (reference_ && key == reference_key_) return &*reference_;
    kernels::Task task;
    task.name = "reference";
    task.reference = spec.getExpression();
    for (auto name : spec.getInputNames()) task.inputs.push_back(kernels::InputSpec{name.cStr(), kernels::DType::float32, {}});
    auto reference = kernels::Reference::create(task);
    if (!reference) return reference.error();
    reference_.emplace(std::move(*reference));
    reference_key_ = key;
    return &*reference_;
  }

  // The launch hold, built at the first time request that asks for one; false (and the reply's
  // note says why) when it cannot be built.
  bool launch_hold(msg::SandboxReply::Builder reply) {
    if (!hold_ && hold_error_.empty()) {
      auto created = cuda::LaunchHold::create();
      if (created) hold_.emplace(std::move(*created));
      else hold_error_ = created.error().message;
    }
    if (!hold_) reply.setLaunchHoldNote("the sandbox cannot hold launches: " + hold_error_);
    return hold_.has_value();
  }

  void reset_l2_state() {
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    cudaStreamAttrValue window{};
    window.accessPolicyWindow.num_bytes = 0;
    cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window);
    cudaGetLastError();  // a device without persisting L2 refuses these: nothing to reset then
  }

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
  std::vector<drk_tensor> call_inputs_, call_outputs_;  // call_candidate()'s copies
  std::optional<cuda::DeviceKernels> peak_kernels_;  // built by the first peaks request
  std::string peak_kernels_error_;                  // why they could not be
  std::optional<kernels::Reference> reference_;
  std::string reference_key_;
  uint64_t calls_by_side_[2] = {0, 0};  // rotates the sets across requests
  uint64_t flushes_ = 0;
};

void CudaSandboxDevice::time(msg::TimeRequest::Reader request, CandidateCalls& calls, msg::SandboxReply::Builder reply) {
  auto sides = request.getSides();
  auto profiled = request.getProfiled();
  const unsigned timed_count = sides.size(), call_count = sides.size() + profiled.size();
  size_t set_count = calls.inputs.size();
  std::vector<std::vector<at::Tensor>> reference_inputs;
  const kernels::Reference* reference = reference_over_inputs(request.getReference(), calls, reference_inputs, reply);
  if (!reference) return;
  CudaEvent start, end;
  auto timed = reply.initTimedCalls(call_count);
  // Each profiled call's window on CUPTI's clock; the records are collected once, after the last call.
  std::vector<std::pair<uint64_t, uint64_t>> windows(call_count);
  // Whatever ends the request, the trace is off again after it.
  struct PauseTrace {
    CudaSandboxDevice* device = nullptr;
    ~PauseTrace() {
      if (device && !device->trace_->pause()) device->broken_ = true;
    }
  } trace_on;
  bool hold = request.getHoldLaunches() && launch_hold(reply);
  double floor_us = 0;
  if (hold) {
    if (auto floor = held_event_floor_us(start, end); floor) floor_us = *floor;
    else {
      reply.setLaunchHoldNote(floor.error().message);
      hold = false;
    }
  }
  for (unsigned i = 0; i < call_count; ++i) {
    const bool traced = i >= timed_count;
    const msg::TimedSide side = traced ? profiled[i - timed_count] : sides[i];
    if (traced && i == timed_count) {
      if (auto resumed = trace_->resume(); !resumed) return trace_failed(reply, resumed.error());
      trace_on.device = this;
    }
    bool candidate = side == msg::TimedSide::CANDIDATE;
    size_t set = calls_by_side_[candidate ? 0 : 1]++ % set_count;
    // The reference runs on LibTorch's current stream: the legacy default stream.
    cudaStream_t stream = candidate ? stream_ : nullptr;
    // The set's last call left its answer in these outputs: every call starts from a NaN poison
    // instead, written before the flush, outside the events.
    if (candidate && !request.getKeepOutputs())
      for (const drk_tensor& output : calls.outputs[set]) cudaMemsetAsync(output.data, 0xFF, tensor_bytes(output), stream);
    reset_l2_state();
    if (request.getFlushL2()) cudaMemsetAsync(flush_, static_cast<int>(flushes_++ & 0xFF), flush_bytes_, stream);
    if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) {
      device_error(reply, latch("before a timed call", status));
      return;
    }
    if (candidate && request.getSwapSeed() != 0)
      if (auto swapped = swap_device_inputs(calls.inputs[set], request.getSwapSeed(), i); !swapped) {
        device_error(reply, swapped.error());
        return;
      }
    // Outside the timed window: the candidate's memory is counted between synchronisations.
    std::optional<size_t> free_before = candidate ? free_device_bytes() : std::nullopt;
    bool held = false;
    if (hold) {
      if (auto begun = hold_->begin(stream); begun) held = true;
      else {
        reply.setLaunchHoldNote(begun.error().message);
        hold = false;
      }
    }
    // The hold runs already, so the window never holds its start: CUPTI does not count it.
    struct Release {
      cuda::LaunchHold* hold;
      ~Release() {
        if (hold) hold->release();
      }
    } release_on_exit{held ? &*hold_ : nullptr};
    windows[i].first = cuda::KernelTrace::timestamp_ns();
    int candidate_status = DRK_OK;
    cudaEventRecord(start.event, stream);
    if (candidate) {
      candidate_status = call_candidate(calls, set);
    } else {
      auto value = reference->run(reference_inputs[set]);
      if (!value) {
        reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
        reply.setMessage("the reference failed on the device: " + value.error().message);
        return;
      }
    }
    cudaEventRecord(end.event, stream);
    if (held) hold_->release();
    if (auto synchronized = synchronize(); !synchronized) {
      device_error(reply, synchronized.error());
      return;
    }
    windows[i].second = cuda::KernelTrace::timestamp_ns();
    const bool launch_hidden = held && !hold_->timed_out();
    if (held && !launch_hidden)
      reply.setLaunchHoldNote("the launch hold gave up before the call was queued: the " +
                              std::string(candidate ? "candidate" : "reference") +
                              " waited on the device inside its call");
    // The reference runs in this process next: a mode the candidate changed must not slow it.
    if (candidate && calls.math_modes) calls.math_modes->check();
    if (candidate) account_memory(free_before, "a timed call");
    if (answered_memory_limit(reply)) return;
    if (candidate_status != DRK_OK) return returned_error(reply, candidate_status, "in a timed call");
    float elapsed_ms = 0.0f;
    cudaEventElapsedTime(&elapsed_ms, start.event, end.event);
    const double floor_taken_us = launch_hidden ? floor_us : 0.0;
    auto call = timed[i];
    call.setSide(side);
    call.setSet(static_cast<uint32_t>(set));
    call.setEventUs(std::max(static_cast<double>(elapsed_ms) * 1000.0 - floor_taken_us, 0.0));
    call.setEventFloorUs(floor_taken_us);
    call.setLaunchHidden(launch_hidden);
    call.setProfiled(traced);
  }
  if (call_count == timed_count) {
    reply.setCallsCompleted(call_count);
    return;
  }
  auto records = trace_->collect();
  trace_on.device = nullptr;
  if (auto paused = trace_->pause(); !paused) return trace_failed(reply, paused.error());
  std::vector<std::vector<const cuda::KernelRecord*>> by_call(call_count);
  for (const auto& record : records)
    for (unsigned i = timed_count; i < call_count; ++i)
      if (record.start_ns >= windows[i].first && record.end_ns <= windows[i].second) {
        by_call[i].push_back(&record);
        break;
      }
  for (unsigned i = timed_count; i < call_count; ++i) {
    auto kernels = timed[i].initKernels(static_cast<unsigned>(by_call[i].size()));
    for (unsigned k = 0; k < by_call[i].size(); ++k) {
      const auto& r = *by_call[i][k];
      auto out = kernels[k];
      out.setName(r.name);
      out.setStartNs(r.start_ns);
      out.setEndNs(r.end_ns);
      auto grid = out.initGrid(3);
      auto block = out.initBlock(3);
      for (unsigned d = 0; d < 3; ++d) {
        grid.set(d, static_cast<uint32_t>(r.grid[d]));
        block.set(d, static_cast<uint32_t>(r.block[d]));
      }
      out.setRegistersPerThread(r.registers_per_thread);
      out.setStaticSharedBytes(static_cast<uint32_t>(r.static_shared_bytes));
      out.setDynamicSharedBytes(static_cast<uint32_t>(r.dynamic_shared_bytes));
      out.setStreamId(r.stream_id);
    }
  }
  reply.setCallsCompleted(call_count);
}

// The device's time between two events with nothing between them, behind the hold: what every
// held call's events cost beyond its work (1.3 us on the H200). The median of a few windows.
Result<double> CudaSandboxDevice::held_event_floor_us(CudaEvent& start, CudaEvent& end) {
  constexpr int kWindows = 5;
  std::vector<double> windows_us;
  for (int w = 0; w < kWindows; ++w) {
    if (auto begun = hold_->begin(stream_); !begun) return begun.error();
    cudaEventRecord(start.event, stream_);
    cudaEventRecord(end.event, stream_);
    hold_->release();
    if (auto status = cudaStreamSynchronize(stream_); status != cudaSuccess)
      return make_error(Errc::io_error, "measuring the events' own cost: " + cuda_error_text(status));
    if (hold_->timed_out()) return make_error(Errc::timeout, "the launch hold gave up around an empty window");
    float elapsed_ms = 0.0f;
    cudaEventElapsedTime(&elapsed_ms, start.event, end.event);
    windows_us.push_back(static_cast<double>(elapsed_ms) * 1000.0);
  }
  std::nth_element(windows_us.begin(), windows_us.begin() + kWindows / 2, windows_us.end());
  return windows_us[kWindows / 2];
}

// CUPTI could not switch the trace: its state is unknown, so no later call's timing can be
// trusted; the sandbox is replaced.
void CudaSandboxDevice::trace_failed(msg::SandboxReply::Builder reply, const Error& error) {
  device_error(reply, make_error(Errc::sandbox_crashed, error.message));
  broken_ = true;
}

// What the first requests would otherwise wait for, done as the sandbox starts, which is before
// its candidate is known (a spare starts while the Evaluator evaluates the one before), and before
// its syscall filter: cuBLAS's handle and LibTorch's first kernels (the references), and NVRTC's
// start with the peak kernels. A failure is kept for the request that meets it.
// LibTorch CUDA's lazy set-up and cuBLAS's handle, at the start and so before the syscall filter
// and before any candidate: neither is charged to a candidate's first call.
void CudaSandboxDevice::warm_up() {
  try {
    const auto a = at::ones({64, 64}, at::TensorOptions().device(at::kCUDA));
    (void)at::matmul(a, a).sum().item<float>();
  } catch (const std::exception&) {
  }
}

void CudaSandboxDevice::measure_peaks(msg::SandboxReply::Builder reply) {
  auto peaks = reply.initPeaks();
  peaks.setName(name_);
  peaks.setL2CacheBytes(l2_bytes_);
  // Built here, not at the start: one sandbox per engine measures the peaks, and NVRTC's compile
  // (25-90 ms) would lengthen every other sandbox's start. Without them the peaks stay 0
  // (unknown); the message says why.
  if (!peak_kernels_) {
    auto kernels = cuda::DeviceKernels::build(kPeakSource, "drk_peaks.cu", {"drk_peak_copy", "drk_peak_fma"});
    if (kernels) peak_kernels_.emplace(std::move(*kernels));
    else peak_kernels_error_ = kernels.error().message;
  }
  if (!peak_kernels_) {
    reply.setMessage("cannot build the peak kernels: " + peak_kernels_error_);
    return;
  }
  const cuda::DeviceKernels* kernels = &*peak_kernels_;
  int multiprocessors = 1;
  cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0);
  CudaEvent start, end;
  // The fastest of a few runs after a warm-up: a peak, not a typical value.
  auto best_ms = [&](const void* kernel, dim3 grid, dim3 block, void** arguments) {
    float best = 0.0f;
    for (int run = 0; run < 6; ++run) {
      cudaEventRecord(start.event, stream_);
      cudaLaunchKernel(kernel, grid, block, arguments, 0, stream_);
      cudaEventRecord(end.event, stream_);
      cudaEventSynchronize(end.event);
      float ms = 0.0f;
      cudaEventElapsedTime(&ms, start.event, end.event);
      if (run > 0 && (best == 0.0f || ms < best)) best = ms;
    }
    return static_cast<double>(best);
  };
  const long long copy_floats = 128ll << 20;  // 512 MiB each way, far beyond L2
  void *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, copy_floats * 4) == cudaSuccess && cudaMalloc(&out, copy_floats * 4) == cudaSuccess) {
    cudaMemsetAsync(in, 0, copy_floats * 4, stream_);
    long long vectors = copy_floats / 4;
    void* arguments[] = {&in, &out, &vectors};
    double ms = best_ms(kernels->kernel("drk_peak_copy"), dim3(static_cast<unsigned>((vectors + 255) / 256)),
                        dim3(256), arguments);
    if (ms > 0) peaks.setCopyBytesPerS(2.0 * static_cast<double>(copy_floats) * 4 / (ms * 1e-3));
  }
  cudaGetLastError();
  if (in) cudaFree(in);
  if (out) cudaFree(out);
  int iterations = 4096;
  float a = 0.999f, b = 0.001f;
  float* sink = static_cast<float*>(flush_);
  void* fma_arguments[] = {&sink, &iterations, &a, &b};
  unsigned blocks = static_cast<unsigned>(multiprocessors) * 8;
  double fma_ms = best_ms(kernels->kernel("drk_peak_fma"), dim3(blocks), dim3(256), fma_arguments);
  if (fma_ms > 0) peaks.setFmaFlopsPerS(2.0 * 8 * iterations * blocks * 256.0 / (fma_ms * 1e-3));
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) device_error(reply, latch("measuring the peaks", status));
}

// Keeps the device busy with groups of calls of about kEnergyGroup (an event after each, at most
// kGroupsInFlight queued) while the host reads NVML's counter between launches, so that reading
// NVML (which can take milliseconds) never leaves the device idle. The batch runs from one
// update of the counter to the first update after min_ms; at each update the calls counted are
// those whose group's event had completed, so both ends lag the same way and the count is off by
// less than one group.
Result<std::optional<CudaSandboxDevice::SideEnergy>> CudaSandboxDevice::energy_of(const std::function<bool()>& call,
                                                                                 uint32_t min_ms,
                                                                                 msg::SandboxReply::Builder reply) {
  constexpr size_t kGroupsInFlight = 3;
  auto failed = [&](const char* when, cudaError_t status) {
    device_error(reply, latch(when, status));
    return std::optional<SideEnergy>();
  };
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) return failed("before an energy batch", status);
  // One call alone sizes the groups.
  auto timed = Clock::now();
  if (!call()) return std::optional<SideEnergy>();
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) return failed("in an energy batch", status);
  double call_ms = std::max(std::chrono::duration<double, std::milli>(Clock::now() - timed).count(), 1e-3);
  // Reading NVML takes milliseconds (seen on the H200): a group must outlast a read, or the
  // device idles while the host reads and the idle power is charged to the calls.
  double read_ms = 0;
  for (int i = 0; i < 3; ++i) {
    auto read_started = Clock::now();
    if (auto reading = nvml_->total_millijoules(); !reading) return reading.error();
    read_ms = std::max(read_ms, std::chrono::duration<double, std::milli>(Clock::now() - read_started).count());
  }
  double group_ms = std::max(static_cast<double>(kEnergyGroup.count()), 2.0 * read_ms);
  uint64_t group = std::clamp<uint64_t>(static_cast<uint64_t>(group_ms / call_ms), 1, uint64_t{1} << 16);

  std::vector<CudaEvent> events(kGroupsInFlight + 1);
  struct InFlight {
    size_t event;
    uint64_t calls;
  };
  std::vector<InFlight> in_flight;
  size_t next_event = 0;
  uint64_t completed = 0;
  auto retire = [&](bool wait_for_oldest) -> cudaError_t {
    while (!in_flight.empty()) {
      cudaEvent_t oldest = events[in_flight.front().event].event;
      cudaError_t status = wait_for_oldest ? cudaEventSynchronize(oldest) : cudaEventQuery(oldest);
      if (status == cudaErrorNotReady) return cudaSuccess;
      if (status != cudaSuccess) return status;
      completed += in_flight.front().calls;
      in_flight.erase(in_flight.begin());
      wait_for_oldest = false;
    }
    return cudaSuccess;
  };

  auto first = nvml_->total_millijoules();
  if (!first) return first.error();
  uint64_t last_mj = *first, start_mj = 0, start_calls = 0, end_calls = 0;
  std::optional<Clock::time_point> started;
  Clock::time_point ended;
  auto launched = Clock::now();
  SideEnergy side;
  for (;;) {
    for (uint64_t i = 0; i < group; ++i)
      if (!call()) return std::optional<SideEnergy>();
    size_t event = next_event++ % events.size();
    if (auto status = cudaEventRecord(events[event].event, nullptr); status != cudaSuccess)
      return failed("recording an energy batch's event", status);
    in_flight.push_back({event, group});
    if (auto status = retire(in_flight.size() >= kGroupsInFlight); status != cudaSuccess)
      return failed("in an energy batch", status);
    auto now_mj = nvml_->total_millijoules();
    if (!now_mj) return now_mj.error();
    auto now = Clock::now();
    if (*now_mj != last_mj) {
      last_mj = *now_mj;
      if (!started) {
        started = now;
        start_mj = last_mj;
        start_calls = completed;
      } else {
        ++side.updates;
        end_calls = completed;
        ended = now;
        if (now - *started >= std::chrono::milliseconds(min_ms)) break;
      }
    }
    if (!started && now - launched > kCounterWait)
      return make_error(Errc::unsupported, "NVML's energy counter did not change within " +
                                               std::to_string(kCounterWait.count()) + " ms");
    if (started && now - *started >= std::chrono::milliseconds(min_ms) + kEnergyOvertime) break;
  }
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) return failed("after an energy batch", status);
  if (side.updates == 0) return make_error(Errc::unsupported, "NVML's energy counter stopped changing");
  side.calls = end_calls - start_calls;
  side.batch_ms = std::chrono::duration<double, std::milli>(ended - *started).count();
  double millijoules = static_cast<double>(last_mj - start_mj);
  side.millijoules_per_call = side.calls > 0 ? millijoules / static_cast<double>(side.calls) : 0.0;
  side.watts = side.batch_ms > 0 ? millijoules / side.batch_ms : 0.0;  // mJ per ms
  return std::optional<SideEnergy>(side);
}

void CudaSandboxDevice::measure_energy(msg::EnergyRequest::Reader request, CandidateCalls& calls,
                                       msg::SandboxReply::Builder reply) {
  auto out = reply.initEnergy();
  if (!nvml_ && nvml_unavailable_.empty()) {
    if (pci_bus_id_.empty()) {
      nvml_unavailable_ = "cudaDeviceGetPCIBusId failed, so the device cannot be found in NVML";
    } else if (auto opened = cuda::NvmlEnergy::open(pci_bus_id_); opened) {
      nvml_ = std::move(*opened);
    } else {
      nvml_unavailable_ = opened.error().message;
    }
  }
  if (!nvml_) {
    out.setAvailable(false);
    out.setReason(nvml_unavailable_);
    return;
  }
  std::vector<std::vector<at::Tensor>> reference_inputs;
  const kernels::Reference* reference = reference_over_inputs(request.getReference(), calls, reference_inputs, reply);
  if (!reference) return;
  size_t set_count = calls.inputs.size();
  uint64_t candidate_calls = 0, reference_calls = 0;
  auto candidate_call = [&]() {
    const int status = call_candidate(calls, candidate_calls++ % set_count);
    if (status == DRK_OK) return true;
    returned_error(reply, status, "in an energy batch");
    return false;
  };
  auto reference_call = [&]() {
    auto value = reference->run(reference_inputs[reference_calls++ % set_count]);
    if (value) return true;
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage("the reference failed on the device: " + value.error().message);
    return false;
  };
  uint32_t min_ms = std::max<uint32_t>(request.getMinMs(), 1);
  std::optional<size_t> free_before = free_device_bytes();
  auto candidate = energy_of(candidate_call, min_ms, reply);
  if (candidate && *candidate) account_memory(free_before, "an energy batch");
  if (answered_memory_limit(reply)) return;
  if (candidate && !*candidate) return;  // the reply says what ended the batch
  if (calls.math_modes) calls.math_modes->check();
  auto reference_side = candidate ? energy_of(reference_call, min_ms, reply) : candidate;
  if (reference_side && !*reference_side) return;
  if (!candidate || !reference_side) {
    out.setAvailable(false);
    out.setReason((candidate ? reference_side : candidate).error().message);
    return;
  }
  auto fill = [](msg::EnergySide::Builder side, const SideEnergy& measured) {
    side.setMillijoulesPerCall(measured.millijoules_per_call);
    side.setCalls(measured.calls);
    side.setBatchMs(measured.batch_ms);
    side.setAverageWatts(measured.watts);
    side.setCounterUpdates(measured.updates);
  };
  fill(out.initCandidate(), **candidate);
  fill(out.initReference(), **reference_side);
  out.setAvailable(true);
  uint32_t updates = std::min((*candidate)->updates, (*reference_side)->updates);
  out.setResolved(updates >= kMinCounterUpdates);
  if (updates < kMinCounterUpdates)
    out.setReason("a batch saw only " + std::to_string(updates) + " updates of NVML's energy counter in " +
                  std::to_string(min_ms) + " ms (it needs " + std::to_string(kMinCounterUpdates) +
                  "): raise eval.energy_min_ms for a value to rely on");
}

// One candidate call on set 0 under CUPTI's Range Profiler (the kernel trace is off, as always
// outside profiled time calls), then the same call traced, for the kernels' names.
void CudaSandboxDevice::measure_metrics(CandidateCalls& calls, msg::SandboxReply::Builder reply) {
  auto out = reply.initMetrics();
  int candidate_status = DRK_OK;
  std::optional<size_t> free_before = free_device_bytes();
  auto metrics = cuda::profile_kernels(0, [&]() -> Status {
    candidate_status = call_candidate(calls, 0);
    return {};
  });
  if (auto synchronized = synchronize(); !synchronized) {
    device_error(reply, synchronized.error());
    return;
  }
  account_memory(free_before, "the profiled call");
  if (answered_memory_limit(reply)) return;
  if (candidate_status != DRK_OK) return returned_error(reply, candidate_status, "in the profiled call");
  if (!metrics) {
    out.setAvailable(false);
    out.setReason(metrics.error().message);
    return;
  }
  // Auto ranges are named by their index: the same call once more, traced, names its kernels in
  // launch order (kept as "range N" when the two calls did not launch the same number).
  if (auto resumed = trace_->resume(); !resumed) return trace_failed(reply, resumed.error());
  candidate_status = call_candidate(calls, 0);
  auto synchronized = synchronize();
  auto records = trace_->collect();
  if (auto paused = trace_->pause(); !paused) return trace_failed(reply, paused.error());
  if (!synchronized) {
    device_error(reply, synchronized.error());
    return;
  }
  std::sort(records.begin(), records.end(),
            [](const cuda::KernelRecord& a, const cuda::KernelRecord& b) { return a.start_ns < b.start_ns; });
  for (size_t k = 0; k < metrics->size(); ++k)
    (*metrics)[k].name = records.size() == metrics->size() ? records[k].name : "range " + (*metrics)[k].name;
  out.setAvailable(true);
  auto kernels = out.initKernels(static_cast<unsigned>(metrics->size()));
  for (unsigned k = 0; k < metrics->size(); ++k) {
    const auto& m = (*metrics)[k];
    kernels[k].setName(m.name);
    kernels[k].setDramThroughputPct(m.dram_throughput_pct);
    kernels[k].setSmThroughputPct(m.sm_throughput_pct);
    kernels[k].setL2HitRatePct(m.l2_hit_rate_pct);
    kernels[k].setAchievedOccupancyPct(m.achieved_occupancy_pct);
  }
}

}  // namespace

std::unique_ptr<SandboxDevice> make_sandbox_device(const SandboxDeviceOptions& options, std::string& error) {
  return CudaSandboxDevice::create(options, error);
}

}  // namespace drk::evaluator
