// drk-task: relu
// drk-expect: hacked threads_left_running
// Work escaping the timer: hands the work to a background thread it keeps alive and returns at
// once, so the timed call measures only the hand-off. The sandbox counts its threads around
// every batch: a thread the candidate started that is still alive afterwards is reported.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "drk_kernel.h"

namespace {

struct Job {
  const float* x = nullptr;
  float* y = nullptr;
  int64_t n = 0;
};

std::mutex mutex;
std::condition_variable posted;
Job pending;
bool has_job = false;

void worker() {
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex);
    posted.wait(lock, [] { return has_job; });
    Job job = pending;
    has_job = false;
    lock.unlock();
    for (int64_t i = 0; i < job.n; ++i) job.y[i] = job.x[i] > 0.0f ? job.x[i] : 0.0f;
  }
}

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  static const bool started = [] {
    std::thread(worker).detach();
    return true;
  }();
  (void)started;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  {
    std::lock_guard<std::mutex> lock(mutex);
    pending = Job{static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n};
    has_job = true;
  }
  posted.notify_one();
  return DRK_OK;
}
