#include "actors/evaluator/cuda/cuda_sandbox_device.h"

namespace drk::evaluator {
namespace {

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

}  // namespace

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

}  // namespace drk::evaluator
