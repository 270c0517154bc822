// Honest attention for the `scaled_dot_product_attention` task: q [..., L, E], k [..., S, E],
// v [..., S, Ev]; y = softmax(q k^T / sqrt(E)) v, [..., L, Ev], one query row at a time with a
// numerically stable softmax. The row of scores lives in the harness's workspace.
#include <cmath>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || inputs[0].ndim < 2) return DRK_E_BAD_ARGUMENT;
  const int32_t rank = inputs[0].ndim;
  int64_t batch = 1;
  for (int32_t d = 0; d < rank - 2; ++d) batch *= inputs[0].shape[d];
  const int64_t queries = inputs[0].shape[rank - 2], dim = inputs[0].shape[rank - 1];
  const int64_t keys = inputs[1].shape[rank - 2], value_dim = inputs[2].shape[rank - 1];
  if (inputs[1].shape[rank - 1] != dim || inputs[2].shape[rank - 2] != keys) return DRK_E_UNSUPPORTED_SHAPE;
  float* scores = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(keys) * sizeof(float)));
  if (!scores) return DRK_E_WORKSPACE;
  const float* q = static_cast<const float*>(inputs[0].data);
  const float* k = static_cast<const float*>(inputs[1].data);
  const float* v = static_cast<const float*>(inputs[2].data);
  float* y = static_cast<float*>(outputs[0].data);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  for (int64_t b = 0; b < batch; ++b) {
    const float* kb = k + b * keys * dim;
    const float* vb = v + b * keys * value_dim;
    for (int64_t l = 0; l < queries; ++l) {
      const float* query = q + (b * queries + l) * dim;
      float row_max = -INFINITY;
      for (int64_t s = 0; s < keys; ++s) {
        float dot = 0.0f;
        for (int64_t e = 0; e < dim; ++e) dot += query[e] * kb[s * dim + e];
        scores[s] = dot * scale;
        row_max = scores[s] > row_max ? scores[s] : row_max;
      }
      float sum = 0.0f;
      for (int64_t s = 0; s < keys; ++s) {
        scores[s] = std::exp(scores[s] - row_max);
        sum += scores[s];
      }
      float* out = y + (b * queries + l) * value_dim;
      for (int64_t e = 0; e < value_dim; ++e) out[e] = 0.0f;
      for (int64_t s = 0; s < keys; ++s) {
        const float weight = scores[s] / sum;
        for (int64_t e = 0; e < value_dim; ++e) out[e] += weight * vb[s * value_dim + e];
      }
    }
  }
  return DRK_OK;
}
