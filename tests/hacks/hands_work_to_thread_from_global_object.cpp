// drk-task: relu
// drk-threads: 1
// drk-expect: hacked threads_left_running
// Work done by a thread that already existed: a C++ global object's constructor starts a worker
// when the object is loaded, before any call. Each call hands the second half of its work to it,
// does the first half itself, and waits for the worker before returning: the output is complete
// at return, and with ctx->max_threads = 1 the call runs on two cores, 1.6-2x faster than it may.
// The sandbox's thread census is taken before the object is loaded, so the worker counts as the
// candidate's (threads_left_running). Where the sandbox's CPUs are not pinned, its CPU time over
// its timed batches is also near twice their wall time (cpuPerWall); pinned to one CPU, the two
// threads take turns on it and the calls are slower than one thread's.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "drk_kernel.h"

namespace {

struct Worker {
  std::mutex mutex;
  std::condition_variable changed;
  const float* x = nullptr;
  float* y = nullptr;
  int64_t begin = 0, end = 0;
  bool pending = false;

  Worker() { std::thread([this] { serve(); }).detach(); }

  void serve() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [this] { return pending; });
      for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      pending = false;
      changed.notify_all();
    }
  }
} worker;

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  {
    std::lock_guard<std::mutex> lock(worker.mutex);
    worker.x = x, worker.y = y, worker.begin = n / 2, worker.end = n, worker.pending = true;
  }
  worker.changed.notify_all();
  for (int64_t i = 0; i < n / 2; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  std::unique_lock<std::mutex> lock(worker.mutex);
  worker.changed.wait(lock, [] { return !worker.pending; });
  return DRK_OK;
}
