// NVRTC needs no GPU: those tests run everywhere CUDA is installed (CI included). The device and
// CUPTI tests need a GPU and skip, saying why, where there is none.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "actors/evaluator/cuda/cuda_device.h"
#include "actors/evaluator/cuda/cupti_kernel_trace.h"
#include "actors/evaluator/cuda/cupti_range_profiler.h"
#include "actors/evaluator/cuda/device_kernels.h"
#include "actors/evaluator/cuda/launch_hold.h"
#include "actors/evaluator/cuda/nvml_energy.h"
#include "actors/evaluator/cuda/nvrtc_compiler.h"
#include "tests/doctest_drk.h"
#include "tests/support/first_gpu.h"

using namespace drk::evaluator::cuda;

namespace {

constexpr const char* kScaleKernel = R"cu(
extern "C" __global__ void drk_scale(const float* x, float* y, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = factor * x[i];
}
)cu";

}  // namespace

DRK_TEST_CASE("NVRTC compiles a kernel to a CUBIN without a GPU") {
  auto binary = compile_cuda(kScaleKernel, NvrtcOptions{});
  DRK_REQUIRE_MESSAGE(binary.ok(), binary.error().describe());
  DRK_CHECK(binary->cubin.size() > 100);
  // A CUBIN is an ELF file.
  DRK_CHECK(std::string(binary->cubin.data() + 1, 3) == "ELF");
}

DRK_TEST_CASE("a CUDA source that does not compile returns NVRTC's log with the line") {
  NvrtcOptions options;
  options.source_name = "broken.cu";
  auto binary = compile_cuda("extern \"C\" __global__ void k() {\n  undefined_name = 1;\n}\n", options);
  DRK_REQUIRE_FALSE(binary.ok());
  DRK_CHECK(binary.error().code == drk::Errc::compile_error);
  DRK_CHECK(binary.error().message.find("broken.cu(2)") != std::string::npos);
  DRK_CHECK(binary.error().message.find("undefined_name") != std::string::npos);
}

DRK_TEST_CASE("CUPTI sees the kernel that ran, with its launch shape, and nothing while paused [gpu]") {
  if (!drk::testing::first_gpu_or_skip()) return;
  auto kernels = DeviceKernels::build(kScaleKernel, "scale.cu", {"drk_scale"});
  DRK_REQUIRE_MESSAGE(kernels.ok(), kernels.error().describe());
  auto trace = KernelTrace::start();
  DRK_REQUIRE_MESSAGE(trace.ok(), trace.error().describe());
  const int n = 1 << 20;
  float *x = nullptr, *y = nullptr;
  DRK_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&x), n * sizeof(float)) == cudaSuccess);
  DRK_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&y), n * sizeof(float)) == cudaSuccess);
  std::vector<float> host(n, 2.0f);
  cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  float factor = 3.0f;
  int count = n;
  void* arguments[] = {&x, &y, &factor, &count};
  DRK_REQUIRE(cudaLaunchKernel(kernels->kernel("drk_scale"), dim3(n / 256), dim3(256), arguments, 0, nullptr) ==
              cudaSuccess);
  DRK_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaMemcpy(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  DRK_CHECK(host[12345] == 6.0f);

  const auto records = (*trace)->collect();
  DRK_REQUIRE(records.size() == 1);
  DRK_CHECK(records[0].name == "drk_scale");
  DRK_CHECK(records[0].grid[0] == n / 256);
  DRK_CHECK(records[0].block[0] == 256);
  DRK_CHECK(records[0].end_ns > records[0].start_ns);

  // Paused, the sandbox's timed calls run without CUPTI's instrumentation and leave no records.
  DRK_REQUIRE((*trace)->pause().ok());
  DRK_REQUIRE(cudaLaunchKernel(kernels->kernel("drk_scale"), dim3(n / 256), dim3(256), arguments, 0, nullptr) ==
              cudaSuccess);
  DRK_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  DRK_CHECK((*trace)->collect().empty());
  DRK_REQUIRE((*trace)->resume().ok());
  DRK_REQUIRE(cudaLaunchKernel(kernels->kernel("drk_scale"), dim3(n / 512), dim3(512), arguments, 0, nullptr) ==
              cudaSuccess);
  DRK_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto resumed = (*trace)->collect();
  DRK_REQUIRE(resumed.size() == 1);
  DRK_CHECK(resumed[0].block[0] == 512);
  cudaFree(x);
  cudaFree(y);
}

namespace {

// Scales 2.0 by 3 on `stream` behind `hold` and records `done` after it.
struct HeldScale {
  float *x = nullptr, *y = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  HeldScale() {
    cudaMalloc(reinterpret_cast<void**>(&x), 1024 * sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&y), 1024 * sizeof(float));
    std::vector<float> twos(1024, 2.0f);
    cudaMemcpy(x, twos.data(), 1024 * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(y, 0, 1024 * sizeof(float));
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreate(&done);
  }
  ~HeldScale() {
    cudaEventDestroy(done);
    cudaStreamDestroy(stream);
    cudaFree(x);
    cudaFree(y);
  }
  void queue(const DeviceKernels& kernels) {
    float factor = 3.0f;
    int count = 1024;
    void* arguments[] = {&x, &y, &factor, &count};
    DRK_REQUIRE(cudaLaunchKernel(kernels.kernel("drk_scale"), dim3(4), dim3(256), arguments, 0, stream) == cudaSuccess);
    DRK_REQUIRE(cudaEventRecord(done, stream) == cudaSuccess);
  }
  float result() {
    float value = 0.0f;
    cudaMemcpy(&value, y + 1000, sizeof(float), cudaMemcpyDeviceToHost);
    return value;
  }
};

}  // namespace

DRK_TEST_CASE("the launch hold keeps queued work from running until it is released [gpu]") {
  if (!drk::testing::first_gpu_or_skip()) return;
  auto kernels = DeviceKernels::build(kScaleKernel, "scale.cu", {"drk_scale"});
  DRK_REQUIRE_MESSAGE(kernels.ok(), kernels.error().describe());
  // A long timeout: the hold must still be holding when the queued work is looked at.
  auto hold = LaunchHold::create(std::chrono::milliseconds(5000));
  DRK_REQUIRE_MESSAGE(hold.ok(), hold.error().describe());
  HeldScale scale;
  // Once unheld first: a kernel's first launch loads its module (CUDA's lazy loading), which
  // waits for the device, hold included.
  scale.queue(*kernels);
  DRK_REQUIRE(cudaStreamSynchronize(scale.stream) == cudaSuccess);
  DRK_REQUIRE(cudaMemset(scale.y, 0, 1024 * sizeof(float)) == cudaSuccess);
  DRK_REQUIRE(hold->begin(scale.stream).ok());
  scale.queue(*kernels);
  // Only a query: a synchronous copy would wait for the device, hold included, until it gave up.
  DRK_CHECK(cudaEventQuery(scale.done) == cudaErrorNotReady);
  hold->release();
  DRK_REQUIRE(cudaStreamSynchronize(scale.stream) == cudaSuccess);
  DRK_CHECK(scale.result() == 6.0f);
  DRK_CHECK_FALSE(hold->timed_out());
}

DRK_TEST_CASE("a launch hold that is never released gives up by itself and says so [gpu]") {
  if (!drk::testing::first_gpu_or_skip()) return;
  auto kernels = DeviceKernels::build(kScaleKernel, "scale.cu", {"drk_scale"});
  DRK_REQUIRE(kernels.ok());
  auto hold = LaunchHold::create(std::chrono::milliseconds(20));
  DRK_REQUIRE(hold.ok());
  HeldScale scale;
  DRK_REQUIRE(hold->begin(scale.stream).ok());
  scale.queue(*kernels);
  // What waits for the stream inside a held call: it returns once the hold gave up.
  DRK_REQUIRE(cudaStreamSynchronize(scale.stream) == cudaSuccess);
  DRK_CHECK(hold->timed_out());
  DRK_CHECK(scale.result() == 6.0f);
}

DRK_TEST_CASE("harness kernels that do not compile fail typed, naming the source [gpu]") {
  if (!drk::testing::first_gpu_or_skip()) return;
  auto broken = DeviceKernels::build("extern \"C\" __global__ void k() { nope(); }", "broken_harness.cu", {"k"});
  DRK_REQUIRE_FALSE(broken.ok());
  DRK_CHECK(broken.error().code == drk::Errc::compile_error);
  DRK_CHECK(broken.error().message.find("broken_harness.cu") != std::string::npos);
}

// Runs everywhere: without the driver NVML is unavailable with a reason, never a crash; with a
// GPU the counter of CUDA device 0 is found by its PCI bus id and never goes backwards.
DRK_TEST_CASE("NVML's energy counter is read for CUDA device 0, or is unavailable with the reason") {
  char bus_id[64] = "0000:00:00.0";
  if (query_device(0).ok()) DRK_REQUIRE(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0) == cudaSuccess);
  auto nvml = NvmlEnergy::open(bus_id);
  if (!nvml) {
    DRK_CHECK(nvml.error().code == drk::Errc::unsupported);
    DRK_CHECK_MESSAGE(nvml.error().message.find("NVML") != std::string::npos, nvml.error().message);
    std::printf("NVML unavailable here (expected without a driver): %s\n", nvml.error().message.c_str());
    return;
  }
  auto first = (*nvml)->total_millijoules();
  DRK_REQUIRE_MESSAGE(first.ok(), first.error().message);
  auto second = (*nvml)->total_millijoules();
  DRK_REQUIRE_MESSAGE(second.ok(), second.error().message);
  DRK_CHECK(*first > 0);
  DRK_CHECK(*second >= *first);
}

// The Range Profiler on a streaming kernel: one range, named after it, memory-bound numbers.
DRK_TEST_CASE("CUPTI's range profiler gives DRAM, SM, L2 and occupancy metrics of a kernel [gpu]") {
  if (!drk::testing::first_gpu_or_skip()) return;
  auto kernels = DeviceKernels::build(kScaleKernel, "scale.cu", {"drk_scale"});
  DRK_REQUIRE_MESSAGE(kernels.ok(), kernels.error().describe());
  const int n = 1 << 26;  // 256 MiB each way: far beyond L2
  float *x = nullptr, *y = nullptr;
  DRK_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&x), size_t{n} * sizeof(float)) == cudaSuccess);
  DRK_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&y), size_t{n} * sizeof(float)) == cudaSuccess);
  DRK_REQUIRE(cudaMemset(x, 0, size_t{n} * sizeof(float)) == cudaSuccess);
  float factor = 3.0f;
  int count = n;
  void* arguments[] = {&x, &y, &factor, &count};
  auto metrics = profile_kernels(0, [&]() -> drk::Status {
    if (cudaLaunchKernel(kernels->kernel("drk_scale"), dim3(n / 256), dim3(256), arguments, 0, nullptr) != cudaSuccess)
      return drk::make_error(drk::Errc::internal, "the launch failed");
    return {};
  });
  DRK_REQUIRE_MESSAGE(metrics.ok(), metrics.error().describe());
  DRK_REQUIRE(metrics->size() == 1);
  const KernelMetrics& m = (*metrics)[0];
  std::printf("range %s: dram %.1f %%, sm %.1f %%, l2 hit %.1f %%, occupancy %.1f %%\n", m.name.c_str(),
              m.dram_throughput_pct, m.sm_throughput_pct, m.l2_hit_rate_pct, m.achieved_occupancy_pct);
  DRK_CHECK(m.name == "0");  // auto ranges are named by index (the sandbox names them from its trace)
  DRK_CHECK(m.dram_throughput_pct > 30.0);  // a streaming copy-like kernel
  DRK_CHECK(m.dram_throughput_pct <= 100.5);
  DRK_CHECK(m.sm_throughput_pct > 0.0);
  DRK_CHECK(m.l2_hit_rate_pct >= 0.0);
  DRK_CHECK(m.l2_hit_rate_pct <= 100.5);
  DRK_CHECK(m.achieved_occupancy_pct > 10.0);
  DRK_CHECK(m.achieved_occupancy_pct <= 100.5);
  cudaFree(x);
  cudaFree(y);
}
