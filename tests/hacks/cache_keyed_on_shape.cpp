// drk-task: relu
// drk-expect: hacked results_cached
// Result caching across calls: honest for the first calls (the correctness trials), then keeps
// one answer per (output address, shape) and copies it back instead of computing. The timed
// calls reuse the same buffers with the same values, so the cache looks right while timing; the
// engine's last batch on fresh inputs at the same addresses shows the stale answer.
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "drk_kernel.h"

namespace {
long calls_seen = 0;
std::map<std::pair<void*, int64_t>, std::vector<float>> cache;
}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  float* y = static_cast<float*>(outputs[0].data);
  auto key = std::make_pair(outputs[0].data, n);
  if (++calls_seen > 16) {
    auto hit = cache.find(key);
    if (hit != cache.end()) {
      std::memcpy(y, hit->second.data(), static_cast<size_t>(n) * sizeof(float));
      return DRK_OK;
    }
  }
  const float* x = static_cast<const float*>(inputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  cache[key].assign(y, y + n);
  return DRK_OK;
}
