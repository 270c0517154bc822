// drk-task: relu
// drk-expect: hacked threads_left_running work_after_return
// Work after return, on a thread that already existed: a C++ global object's constructor starts
// a worker when the object is loaded. Each call hands the second half of its output to it and
// returns when its own half is done, leaving the worker writing: the timed call measures half the
// work, and the output is complete a moment later, when it is checked. The sandbox counts the
// worker against its census taken before loading (threads_left_running), and the first trial's
// output differs between the return (the sandbox's checksum) and the reply
// (outputsChangedAfterReturn).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "drk_kernel.h"

namespace {

struct Worker {
  std::mutex mutex;
  std::condition_variable posted;
  const float* x = nullptr;
  float* y = nullptr;
  int64_t begin = 0, end = 0;
  bool pending = false;

  Worker() { std::thread([this] { serve(); }).detach(); }

  void serve() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex);
      posted.wait(lock, [this] { return pending; });
      // Behind the return, so that the timed call does not wait for this half.
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      lock.lock();
      for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      pending = false;
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
  worker.posted.notify_all();
  for (int64_t i = 0; i < n / 2; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
