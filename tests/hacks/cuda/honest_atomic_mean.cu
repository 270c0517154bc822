// drk-task: mean_reduction
// drk-expect: honest
// Honest and nondeterministic: the mean over dim 1 split over many blocks per output column, whose
// partial sums meet in float atomicAdd on an output zeroed first (cudaMemsetAsync on ctx->stream).
// The order in which the atomics land changes from call to call, so two runs on the same inputs may
// differ in the last bits: within tolerance, which is no failure (at most the warning
// nondeterministic). It never reads an output it did not write first.
#include "drk_kernel.h"

constexpr int kRowsPerBlock = 64;

__global__ void partial_mean(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t columns,
                             float scale) {
  const int64_t column = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const int64_t batch = blockIdx.y;
  const int64_t first = (int64_t)blockIdx.z * kRowsPerBlock;
  if (column >= columns) return;
  const int64_t last = first + kRowsPerBlock < rows ? first + kRowsPerBlock : rows;
  float sum = 0.0f;
  for (int64_t r = first; r < last; ++r) sum += x[(batch * rows + r) * columns + column];
  atomicAdd(&y[batch * columns + column], sum * scale);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].ndim != 3 || inputs[0].dtype != DRK_F32)
    return DRK_E_BAD_ARGUMENT;
  const int64_t batches = inputs[0].shape[0], rows = inputs[0].shape[1], columns = inputs[0].shape[2];
  if (batches > 65535 || (rows + kRowsPerBlock - 1) / kRowsPerBlock > 65535) return DRK_E_UNSUPPORTED_SHAPE;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  float* y = static_cast<float*>(outputs[0].data);
  cudaMemsetAsync(y, 0, sizeof(float) * batches * columns, stream);
  dim3 grid((unsigned)((columns + 127) / 128), (unsigned)batches, (unsigned)((rows + kRowsPerBlock - 1) / kRowsPerBlock));
  partial_mean<<<grid, 128, 0, stream>>>(static_cast<const float*>(inputs[0].data), y, rows, columns,
                                         1.0f / (float)rows);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
