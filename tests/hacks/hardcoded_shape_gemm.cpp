// drk-task: gemm_relu_divide
// drk-expect: hacked hardcoded_shape
// Hard-coded shapes: M, N and K of the task's cpu shapes are compile-time constants and the
// tensors' shapes are never read. Right at the task's shapes, it returns DRK_OK at any other
// shape with rows in the wrong places and the rest of the output unwritten.
#include "drk_kernel.h"

namespace {
constexpr int kM = 64, kN = 128, kK = 256;
}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  const float* bias = static_cast<const float*>(inputs[2].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      float sum = bias[n];
      for (int k = 0; k < kK; ++k) sum += a[m * kK + k] * b[n * kK + k];
      y[m * kN + n] = (sum > 0.0f ? sum : 0.0f) / 2.0f;
    }
  return DRK_OK;
}
