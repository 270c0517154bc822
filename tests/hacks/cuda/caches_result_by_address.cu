// drk-task: relu
// drk-expect: hacked results_cached
// Result caching across calls: honest for the first calls (the correctness trials), then returns
// at once when it has already seen this (input, output) address pair, leaving the previous
// answer in the output. The engine's last batch, on fresh inputs at the same addresses, shows it.
#include "drk_kernel.h"

namespace {
const int kSlots = 16;
const void* seen_inputs[kSlots];
void* seen_outputs[kSlots];
int seen = 0;
long calls = 0;
}  // namespace

__global__ void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  if (++calls > 8)
    for (int s = 0; s < seen; ++s)
      if (seen_inputs[s] == inputs[0].data && seen_outputs[s] == outputs[0].data) return DRK_OK;
  if (calls > 8 && seen < kSlots) {
    seen_inputs[seen] = inputs[0].data;
    seen_outputs[seen] = outputs[0].data;
    ++seen;
  }
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu<<<132 * 8, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<const float*>(inputs[0].data),
                                                                    static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
