// What CUPTI's kernel trace and the CUDA event pair cost a timed call, measured on the device:
// the evidence behind the Evaluator's untraced timed calls and its event floor (docs/gpu.md).
//
// A ReLU of one element per thread (many short blocks, as rendered kernels often are) at three
// sizes, each call after a 2x-L2 flush, timed with an event pair, with and without the launch
// hold (a spinning kernel that keeps the stream from starting until the call is queued), three
// times: before CUPTI's concurrent-kernel trace was ever enabled, with it enabled (then also
// CUPTI's span and the gap between the hold's end and the first kernel), and after disabling it.
// Plus the empty window (two events, nothing between) and an empty kernel behind the hold.
//
// A standalone program, not part of the CMake build (it needs nothing of drkernel):
//   nvcc -O2 -arch=sm_90 tools/bench/cupti_instrumentation_probe.cu -lcupti -o /tmp/cupti-probe && /tmp/cupti-probe
// tools/scripts/gpu-check.sh builds and runs it. Prints one line per case; medians of 40 calls.
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void relu(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}
// words[0]: released by the host; words[1]: started on the device.
__global__ void hold(volatile unsigned* words) {
  words[1] = 1u;
  __threadfence_system();
  while (words[0] == 0u) {
  }
}
__global__ void empty() {}

struct KernelSpan {
  unsigned long long start, end;
  bool is_hold;
};
std::mutex records_mutex;
std::vector<KernelSpan> records;  // guarded by records_mutex

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr size_t kBytes = 1 << 22;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  std::memset(*buffer, 0, kBytes);
  *size = kBytes;
  *max_records = 0;
}
void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      records.push_back({kernel->start, kernel->end, std::strstr(kernel->name, "hold") != nullptr});
    }
  std::free(buffer);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Probe {
  void* flush = nullptr;
  size_t flush_bytes = 0;
  unsigned* host_words = nullptr;
  unsigned* device_words = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
  float *x = nullptr, *y = nullptr;
  bool traced = false;

  // kernels_per_call relus of n elements (n == 0: empty kernels) between the events.
  void run(const char* label, size_t n, int kernels_per_call, bool held) {
    constexpr int kCalls = 40;
    std::vector<double> event_us;
    size_t first_record;
    {
      std::lock_guard<std::mutex> lock(records_mutex);
      first_record = records.size();
    }
    for (int call = 0; call < kCalls; ++call) {
      cudaMemsetAsync(flush, call & 0xff, flush_bytes, stream);
      cudaDeviceSynchronize();
      if (held) {
        host_words[0] = host_words[1] = 0;
        std::atomic_thread_fence(std::memory_order_seq_cst);
        hold<<<1, 1, 0, stream>>>(device_words);
        while (reinterpret_cast<volatile unsigned*>(host_words)[1] == 0) std::this_thread::yield();
      }
      cudaEventRecord(start, stream);
      for (int k = 0; k < kernels_per_call; ++k) {
        if (n > 0) relu<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
        else empty<<<1, 1, 0, stream>>>();
      }
      cudaEventRecord(end, stream);
      if (held) {
        host_words[0] = 1;
        std::atomic_thread_fence(std::memory_order_seq_cst);
      }
      cudaStreamSynchronize(stream);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, end);
      event_us.push_back(ms * 1000.0);
    }
    const double events = median(event_us);
    std::printf("%-22s %-6s %-8s events %9.2f us", label, held ? "held" : "raw", traced ? "traced" : "untraced",
                events);
    if (traced && kernels_per_call > 0) {
      cuptiActivityFlushAll(1);
      std::vector<KernelSpan> mine;
      {
        std::lock_guard<std::mutex> lock(records_mutex);
        mine.assign(records.begin() + first_record, records.end());
      }
      std::sort(mine.begin(), mine.end(), [](const KernelSpan& a, const KernelSpan& b) { return a.start < b.start; });
      std::vector<double> spans, gaps;
      for (size_t i = 0; i < mine.size();) {
        if (mine[i].is_hold) {
          if (i + 1 < mine.size() && !mine[i + 1].is_hold) gaps.push_back((mine[i + 1].start - mine[i].end) / 1000.0);
          ++i;
          continue;
        }
        size_t last = std::min(i + kernels_per_call, mine.size()) - 1;
        spans.push_back((mine[last].end - mine[i].start) / 1000.0);
        i = last + 1;
      }
      const double span = median(spans);
      std::printf("  CUPTI span %9.2f us, events - span %5.2f us (%5.2f %%)", span, events - span,
                  100 * (events - span) / events);
      if (held) std::printf(", hold end -> first kernel %5.2f us", median(gaps));
    }
    std::printf("\n");
  }

  void cases() {
    run("empty window", 0, 0, true);
    run("empty kernel", 0, 1, true);
    for (size_t n : {size_t{4096} * 2048, size_t{4096} * 8192, size_t{4096} * 32768}) {
      const std::string label = "relu " + std::to_string(n);
      run(label.c_str(), n, 1, true);
      run(label.c_str(), n, 1, false);
    }
  }
};

}  // namespace

int main() {
  int device = 0, l2_bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    std::printf("no CUDA device: nothing measured\n");
    return 1;
  }
  cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device);
  Probe probe;
  probe.flush_bytes = 2 * static_cast<size_t>(l2_bytes);
  cudaMalloc(&probe.flush, probe.flush_bytes);
  cudaHostAlloc(reinterpret_cast<void**>(&probe.host_words), 16, cudaHostAllocMapped);
  cudaHostGetDevicePointer(reinterpret_cast<void**>(&probe.device_words), probe.host_words, 0);
  cudaStreamCreateWithFlags(&probe.stream, cudaStreamNonBlocking);
  cudaEventCreate(&probe.start);
  cudaEventCreate(&probe.end);
  const size_t largest = size_t{4096} * 32768;
  cudaMalloc(&probe.x, largest * sizeof(float));
  cudaMalloc(&probe.y, largest * sizeof(float));
  cudaMemset(probe.x, 0, largest * sizeof(float));
  // Loads every module before anything is timed.
  relu<<<1, 32, 0, probe.stream>>>(probe.x, probe.y, 32);
  empty<<<1, 1, 0, probe.stream>>>();
  probe.host_words[0] = 1;
  hold<<<1, 1, 0, probe.stream>>>(probe.device_words);
  cudaDeviceSynchronize();

  std::printf("== CUPTI's kernel trace never enabled ==\n");
  probe.cases();
  cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  probe.traced = true;
  std::printf("== CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL enabled ==\n");
  probe.cases();
  cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  probe.traced = false;
  std::printf("== disabled again ==\n");
  probe.cases();
  cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(status));
    return 1;
  }
  return 0;
}
