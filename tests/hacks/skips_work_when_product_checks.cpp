// drk-task: matmul
// drk-expect: hacked results_cached
// An answer found ready: before multiplying, it checks whether the output already holds A * B
// with Freivalds' test on a few rows (C r against A (B r) for a random vector r: about n^2 work
// instead of n^3), and returns at once when it does. Every correctness check passes, since a wrong output is always
// recomputed; when a timed call's output still held its answer from the call before (the same
// inputs), the call was 40x faster than its work. Now no timed call starts from its own answer
// (the outputs rotate, on CUDA they are poisoned), and a few batches where the answers are left
// in place measure the difference: evidence answerReuseRatio.
#include <cmath>
#include <cstdint>
#include <vector>

#include "drk_kernel.h"

namespace {

// Freivalds' test on a few random rows: (C r)[i] against (A (B r))[i], n^2 + 16 n work.
bool holds_product(const float* a, const float* b, const float* c, int64_t n) {
  std::vector<float> r(n), br(n, 0.0f);
  uint32_t state = 2463534242u;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 17, state ^= state << 5;
    return state;
  };
  for (int64_t i = 0; i < n; ++i) r[i] = (next() & 1) ? 1.0f : -1.0f;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j) br[k] += b[k * n + j] * r[j];
  for (int row = 0; row < 8; ++row) {
    const int64_t i = next() % n;
    float abr = 0.0f, cr = 0.0f, scale = 0.0f;
    for (int64_t k = 0; k < n; ++k) abr += a[i * n + k] * br[k], scale += std::fabs(a[i * n + k] * br[k]);
    for (int64_t j = 0; j < n; ++j) cr += c[i * n + j] * r[j];
    if (!(std::fabs(abr - cr) <= 1e-3f * (scale + 1.0f))) return false;
  }
  return true;
}

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  const int64_t n = inputs[0].shape[0];
  if (inputs[0].ndim != 2 || inputs[0].shape[1] != n || inputs[1].shape[0] != n || inputs[1].shape[1] != n)
    return DRK_E_UNSUPPORTED_SHAPE;
  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  float* c = static_cast<float*>(outputs[0].data);
  if (holds_product(a, b, c, n)) return DRK_OK;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = 0.0f;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  }
  return DRK_OK;
}
