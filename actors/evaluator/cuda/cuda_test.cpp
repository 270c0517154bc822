// NVRTC needs no GPU: those tests run everywhere CUDA is installed (CI included). The device and
// CUPTI tests need a GPU and skip, saying why, where there is none.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "actors/evaluator/cuda/cuda_device.h"
#include "actors/evaluator/cuda/cupti_kernel_trace.h"
#include "actors/evaluator/cuda/nvrtc_compiler.h"
#include "tests/doctest_drk.h"

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

DRK_TEST_CASE("CUPTI sees the kernel that ran, with its launch shape [gpu]") {
  auto device = query_device(0);
  if (!device) {
    DRK_MESSAGE("skipped: " << device.error().message);
    std::printf("SKIPPED (no GPU): %s\n", device.error().message.c_str());
    return;
  }
  NvrtcOptions options;
  options.architecture = device->architecture();
  auto binary = compile_cuda(kScaleKernel, options);
  DRK_REQUIRE(binary.ok());
  auto trace = KernelTrace::start();
  DRK_REQUIRE_MESSAGE(trace.ok(), trace.error().describe());

  cudaLibrary_t library = nullptr;
  DRK_REQUIRE(cudaLibraryLoadData(&library, binary->cubin.data(), nullptr, nullptr, 0, nullptr,
                                  nullptr, 0) == cudaSuccess);
  cudaKernel_t kernel = nullptr;
  DRK_REQUIRE(cudaLibraryGetKernel(&kernel, library, "drk_scale") == cudaSuccess);
  const int n = 1 << 20;
  float *x = nullptr, *y = nullptr;
  DRK_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&x), n * sizeof(float)) == cudaSuccess);
  DRK_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&y), n * sizeof(float)) == cudaSuccess);
  std::vector<float> host(n, 2.0f);
  cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  float factor = 3.0f;
  int count = n;
  void* arguments[] = {&x, &y, &factor, &count};
  DRK_REQUIRE(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(n / 256), dim3(256),
                               arguments, 0, nullptr) == cudaSuccess);
  DRK_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaMemcpy(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  DRK_CHECK(host[12345] == 6.0f);

  const auto records = (*trace)->collect();
  DRK_REQUIRE(records.size() == 1);
  DRK_CHECK(records[0].name == "drk_scale");
  DRK_CHECK(records[0].grid[0] == n / 256);
  DRK_CHECK(records[0].block[0] == 256);
  DRK_CHECK(records[0].end_ns > records[0].start_ns);
  cudaFree(x);
  cudaFree(y);
  cudaLibraryUnload(library);
}
