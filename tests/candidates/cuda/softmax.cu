// Honest softmax over dim 1 of a 2-D tensor for the `softmax` task on CUDA: one block per row,
// three passes over the row (max, sum of exponentials, write), block reductions in shared
// memory, queued on ctx->stream.
#include "drk_kernel.h"

constexpr int kThreads = 256;

__device__ float block_reduce(float value, float* scratch, bool take_max) {
  for (int offset = 16; offset > 0; offset /= 2) {
    float other = __shfl_down_sync(0xffffffffu, value, offset);
    value = take_max ? fmaxf(value, other) : value + other;
  }
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kThreads / 32 ? scratch[lane] : (take_max ? -INFINITY : 0.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
      float other = __shfl_down_sync(0xffffffffu, value, offset);
      value = take_max ? fmaxf(value, other) : value + other;
    }
    if (lane == 0) scratch[0] = value;
  }
  __syncthreads();
  value = scratch[0];
  __syncthreads();
  return value;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t columns) {
  __shared__ float scratch[kThreads / 32];
  const float* row = x + blockIdx.x * columns;
  float* out = y + blockIdx.x * columns;
  float row_max = -INFINITY;
  for (int64_t c = threadIdx.x; c < columns; c += kThreads) row_max = fmaxf(row_max, row[c]);
  row_max = block_reduce(row_max, scratch, true);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < columns; c += kThreads) sum += __expf(row[c] - row_max);
  sum = block_reduce(sum, scratch, false);
  float inverse = 1.0f / sum;
  for (int64_t c = threadIdx.x; c < columns; c += kThreads) out[c] = __expf(row[c] - row_max) * inverse;
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  if (inputs[0].ndim != 2) return DRK_E_UNSUPPORTED_SHAPE;
  int64_t rows = inputs[0].shape[0], columns = inputs[0].shape[1];
  softmax_rows<<<(unsigned)rows, kThreads, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), columns);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
