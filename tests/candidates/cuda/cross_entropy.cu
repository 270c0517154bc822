// Honest cross-entropy for the `cross_entropy` task on CUDA: predictions [N, C] float32, targets
// [N] int64 class indices, loss = mean over rows of logsumexp(row) - row[target]. One block per
// row (block reductions in shared memory) writes its row's loss to the workspace; a second
// kernel sums them in a fixed order, so the result does not depend on scheduling.
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

__global__ void row_losses(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                           float* __restrict__ losses, int64_t classes) {
  __shared__ float scratch[kThreads / 32];
  const float* row = logits + blockIdx.x * classes;
  float row_max = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += kThreads) row_max = fmaxf(row_max, row[c]);
  row_max = block_reduce(row_max, scratch, true);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += kThreads) sum += expf(row[c] - row_max);
  sum = block_reduce(sum, scratch, false);
  if (threadIdx.x == 0) losses[blockIdx.x] = row_max + logf(sum) - row[targets[blockIdx.x]];
}

__global__ void mean_loss(const float* __restrict__ losses, float* __restrict__ loss, int64_t rows) {
  __shared__ float scratch[kThreads / 32];
  float sum = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += kThreads) sum += losses[r];
  sum = block_reduce(sum, scratch, false);
  if (threadIdx.x == 0) loss[0] = sum / static_cast<float>(rows);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].dtype != DRK_F32 || inputs[1].dtype != DRK_I64)
    return DRK_E_BAD_ARGUMENT;
  if (inputs[0].ndim != 2 || inputs[1].ndim != 1 || inputs[1].shape[0] != inputs[0].shape[0])
    return DRK_E_UNSUPPORTED_SHAPE;
  int64_t rows = inputs[0].shape[0], classes = inputs[0].shape[1];
  float* losses = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(rows) * sizeof(float)));
  if (!losses) return DRK_E_WORKSPACE;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  row_losses<<<(unsigned)rows, kThreads, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                                      static_cast<const int64_t*>(inputs[1].data), losses, classes);
  mean_loss<<<1, kThreads, 0, stream>>>(losses, static_cast<float*>(outputs[0].data), rows);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
