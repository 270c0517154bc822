// What a fresh CUDA process pays before it can time a candidate, phase by phase, and how that
// scales when several start at once: the evidence behind where the CUDA sandbox does its start-up
// work (docs/gpu.md). Each child is forked from this probe before it touches CUDA, as the
// sandbox's zygote forks, and runs the phases the CUDA sandbox runs: the driver, the context, a
// stream, CUPTI's kernel trace, cuBLAS's first product, NVRTC compiles of a small kernel (to a
// cubin for the device, and to PTX then loaded by the driver's JIT).
//
// A standalone program, not part of the CMake build (it needs nothing of drkernel):
//   nvcc -O2 -arch=sm_90 tools/bench/cuda_start_probe.cu -lcupti -lcublas -lnvrtc -lcuda -o /tmp/start-probe
// tools/scripts/gpu-check.sh builds and runs it. Prints, for 1, 2, 4 and 8 children started at
// once, the median of each phase over the children (ms) and the wall time until all were ready.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void copy(const float4* __restrict__ in, float4* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
})";

constexpr const char* kPhases[] = {"driver", "context", "stream", "cupti", "cublas", "nvrtc cubin", "nvrtc ptx",
                                   "ptx load"};
constexpr int kPhaseCount = sizeof kPhases / sizeof kPhases[0];

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point& since) {
  const auto now = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - since).count();
  since = now;
  return ms;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, 1 << 20));
  *size = 1 << 20;
  *max_records = 0;
}
void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

std::string compile(const char* option) {
  nvrtcProgram program;
  nvrtcCreateProgram(&program, kSource, "probe.cu", 0, nullptr, nullptr);
  const char* options[] = {option};
  if (nvrtcCompileProgram(program, 1, options) != NVRTC_SUCCESS) return {};
  size_t size = 0;
  std::string out;
  if (option[6] == 's') {  // --gpu-architecture=sm_XX: a cubin
    nvrtcGetCUBINSize(program, &size);
    out.resize(size);
    nvrtcGetCUBIN(program, out.data());
  } else {
    nvrtcGetPTXSize(program, &size);
    out.resize(size);
    nvrtcGetPTX(program, out.data());
  }
  nvrtcDestroyProgram(&program);
  return out;
}

// One child: every phase in order; writes kPhaseCount doubles (ms) to `fd`.
void run_child(int fd) {
  double phase[kPhaseCount] = {};
  auto since = Clock::now();
  int count = 0;
  cudaGetDeviceCount(&count);
  phase[0] = ms_since(since);
  cudaSetDevice(0);
  cudaFree(nullptr);
  phase[1] = ms_since(since);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  phase[2] = ms_since(since);
  cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  phase[3] = ms_since(since);
  cublasHandle_t handle;
  cublasCreate(&handle);
  float* matrices = nullptr;
  cudaMalloc(&matrices, 3 * 64 * 64 * sizeof(float));
  const float one = 1.0f, zero = 0.0f;
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, matrices, 64, matrices + 4096, 64, &zero,
              matrices + 8192, 64);
  cudaDeviceSynchronize();
  phase[4] = ms_since(since);
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
  (void)compile(arch.c_str());
  phase[5] = ms_since(since);
  const std::string ptx = compile("--gpu-architecture=compute_75");
  phase[6] = ms_since(since);
  CUmodule module = nullptr;
  cuModuleLoadData(&module, ptx.c_str());
  CUfunction function = nullptr;
  cuModuleGetFunction(&function, module, "copy");
  phase[7] = ms_since(since);
  if (write(fd, phase, sizeof phase) != sizeof phase) std::_Exit(1);
  std::_Exit(function ? 0 : 2);
}

}  // namespace

int main() {
  for (int children : {1, 2, 4, 8}) {
    std::vector<int> reads;
    const auto started = Clock::now();
    for (int c = 0; c < children; ++c) {
      int fds[2];
      if (pipe(fds) != 0) return 1;
      if (fork() == 0) {
        close(fds[0]);
        run_child(fds[1]);
      }
      close(fds[1]);
      reads.push_back(fds[0]);
    }
    std::vector<std::vector<double>> phases(kPhaseCount);
    for (int fd : reads) {
      double phase[kPhaseCount];
      if (read(fd, phase, sizeof phase) == sizeof phase)
        for (int p = 0; p < kPhaseCount; ++p) phases[p].push_back(phase[p]);
      close(fd);
    }
    while (wait(nullptr) > 0) {
    }
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    std::printf("%d at once (%zu reported), all done in %.0f ms; median ms:", children, phases[0].size(), wall);
    for (int p = 0; p < kPhaseCount; ++p) {
      auto& v = phases[p];
      std::sort(v.begin(), v.end());
      std::printf("  %s %.1f", kPhases[p], v.empty() ? -1.0 : v[v.size() / 2]);
    }
    std::printf("\n");
  }
  return 0;
}
