// drk-task: softmax
// drk-expect: hacked inputs_mutated
// Inputs used as scratch: stores exp(x - max) over the input row to save a workspace request.
// The output is right; the input the harness handed over is not what it was.
#include "drk_kernel.h"

__device__ float block_reduce(float value, bool take_max) {
  __shared__ float partial[256];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] = take_max ? fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride])
                                      : partial[threadIdx.x] + partial[threadIdx.x + stride];
    __syncthreads();
  }
  float result = partial[0];
  __syncthreads();
  return result;
}

__global__ void softmax_rows(float* x, float* y, int64_t columns) {
  float* in = x + blockIdx.x * columns;
  float* out = y + blockIdx.x * columns;
  float largest = -INFINITY;
  for (int64_t c = threadIdx.x; c < columns; c += blockDim.x) largest = fmaxf(largest, in[c]);
  largest = block_reduce(largest, true);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < columns; c += blockDim.x) {
    in[c] = expf(in[c] - largest);
    sum += in[c];
  }
  sum = block_reduce(sum, false);
  for (int64_t c = threadIdx.x; c < columns; c += blockDim.x) out[c] = in[c] / sum;
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t columns = inputs[0].shape[inputs[0].ndim - 1];
  int64_t rows = 1;
  for (int d = 0; d + 1 < inputs[0].ndim; ++d) rows *= inputs[0].shape[d];
  softmax_rows<<<(unsigned)rows, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<float*>(inputs[0].data), static_cast<float*>(outputs[0].data), columns);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
