#include "actors/evaluator/cuda/launch_hold.h"

#include <atomic>
#include <cstdint>
#include <thread>

namespace drk::evaluator::cuda {
namespace {

// words[0]: released by the host; words[1]: started on the device; words[2]: gave up.
constexpr const char* kHoldSource = R"(
extern "C" __global__ void drk_launch_hold(volatile unsigned* words, unsigned long long timeout_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  words[1] = 1u;
  __threadfence_system();
  do {
    if (words[0] != 0u) return;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < timeout_ns);
  words[2] = 1u;
  __threadfence_system();
}

extern "C" __global__ void drk_end_marker() {}
)";

constexpr auto kStartWait = std::chrono::seconds(1);

}  // namespace

struct LaunchHold::HostWords {
  volatile unsigned words[3];
};

void LaunchHold::FreeHost::operator()(HostWords* words) const { cudaFreeHost(words); }

Result<LaunchHold> LaunchHold::create(std::chrono::milliseconds timeout) {
  auto kernels = DeviceKernels::build(kHoldSource, "drk_launch_hold.cu", {"drk_launch_hold", kEndMarkerKernel});
  if (!kernels) return kernels.error();
  void* host = nullptr;
  if (auto status = cudaHostAlloc(&host, sizeof(HostWords), cudaHostAllocMapped); status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, std::string("cannot allocate the launch hold's mapped flags: ") +
                                          cudaGetErrorString(status));
  }
  auto* words = static_cast<HostWords*>(host);
  void* device = nullptr;
  if (auto status = cudaHostGetDevicePointer(&device, host, 0); status != cudaSuccess) {
    cudaGetLastError();
    cudaFreeHost(host);
    return make_error(Errc::io_error, std::string("cannot map the launch hold's flags to the device: ") +
                                          cudaGetErrorString(status));
  }
  return LaunchHold(std::move(*kernels), words, static_cast<unsigned*>(device), timeout);
}

LaunchHold::~LaunchHold() { release(); }

Status LaunchHold::begin(cudaStream_t stream) {
  for (auto& word : words_->words) word = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  auto timeout_ns = static_cast<unsigned long long>(std::chrono::nanoseconds(timeout_).count());
  unsigned* device_words = device_words_;
  void* arguments[] = {&device_words, &timeout_ns};
  if (auto status = cudaLaunchKernel(kernels_.kernel("drk_launch_hold"), dim3(1), dim3(1), arguments, 0, stream);
      status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, std::string("cannot launch the launch hold: ") + cudaGetErrorString(status));
  }
  const auto deadline = std::chrono::steady_clock::now() + kStartWait;
  while (words_->words[1] == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      release();
      return make_error(Errc::timeout, "the launch hold did not start on the device within a second");
    }
    std::this_thread::yield();
  }
  return {};
}

Status LaunchHold::mark_end(cudaStream_t stream) const {
  if (auto status = cudaLaunchKernel(kernels_.kernel(kEndMarkerKernel), dim3(1), dim3(1), nullptr, 0, stream);
      status != cudaSuccess) {
    cudaGetLastError();
    return make_error(Errc::io_error, std::string("cannot launch the end marker: ") + cudaGetErrorString(status));
  }
  return {};
}

void LaunchHold::release() {
  if (!words_) return;
  words_->words[0] = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool LaunchHold::timed_out() const { return words_ && words_->words[2] != 0; }

}  // namespace drk::evaluator::cuda
