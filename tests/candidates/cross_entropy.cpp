// Honest cross-entropy for the `cross_entropy` task: predictions [N, C] float32, targets [N]
// int64 class indices, loss [] = mean over rows of logsumexp(row) - row[target] (numerically
// stable: the row maximum is subtracted before exp; the mean accumulates in double).
#include <cmath>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].dtype != DRK_F32 || inputs[0].ndim != 2 ||
      inputs[1].dtype != DRK_I64 || inputs[1].ndim != 1 || outputs[0].ndim != 0)
    return DRK_E_BAD_ARGUMENT;
  const int64_t rows = inputs[0].shape[0], classes = inputs[0].shape[1];
  if (inputs[1].shape[0] != rows) return DRK_E_UNSUPPORTED_SHAPE;
  const float* logits = static_cast<const float*>(inputs[0].data);
  const int64_t* targets = static_cast<const int64_t*>(inputs[1].data);
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = logits + r * classes;
    const int64_t target = targets[r];
    if (target < 0 || target >= classes) return DRK_E_BAD_ARGUMENT;
    float row_max = row[0];
    for (int64_t c = 1; c < classes; ++c) row_max = row[c] > row_max ? row[c] : row_max;
    float sum = 0.0f;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(row[c] - row_max);
    total += static_cast<double>(std::log(sum) + row_max - row[target]);
  }
  *static_cast<float*>(outputs[0].data) = static_cast<float>(total / static_cast<double>(rows));
  return DRK_OK;
}
