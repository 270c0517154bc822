// Honest matrix product C = A * B for the `matmul` task on CUDA (row-major, any M, N, K): the
// classic shared-memory tiled kernel, 32x32 tiles, each thread computing 4 outputs of a column.
#include "drk_kernel.h"

constexpr int kTile = 32;
constexpr int kRowsPerThread = 4;

__global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                             int m, int n, int k) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile + 1];
  int column = blockIdx.x * kTile + threadIdx.x;
  int row0 = blockIdx.y * kTile + threadIdx.y * kRowsPerThread;
  float sum[kRowsPerThread] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int base = 0; base < k; base += kTile) {
    for (int r = 0; r < kRowsPerThread; ++r) {
      int tile_row = threadIdx.y * kRowsPerThread + r;
      int a_row = blockIdx.y * kTile + tile_row, a_column = base + threadIdx.x;
      a_tile[tile_row][threadIdx.x] = a_row < m && a_column < k ? a[(int64_t)a_row * k + a_column] : 0.0f;
      int b_row = base + tile_row;
      b_tile[tile_row][threadIdx.x] = b_row < k && column < n ? b[(int64_t)b_row * n + column] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) {
      float b_value = b_tile[i][threadIdx.x];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) sum[r] += a_tile[threadIdx.y * kRowsPerThread + r][i] * b_value;
    }
    __syncthreads();
  }
  for (int r = 0; r < kRowsPerThread; ++r)
    if (row0 + r < m && column < n) c[(int64_t)(row0 + r) * n + column] = sum[r];
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].dtype != DRK_F32 || inputs[1].dtype != DRK_F32)
    return DRK_E_BAD_ARGUMENT;
  if (inputs[0].ndim != 2 || inputs[1].ndim != 2 || inputs[0].shape[1] != inputs[1].shape[0])
    return DRK_E_UNSUPPORTED_SHAPE;
  int m = (int)inputs[0].shape[0], k = (int)inputs[0].shape[1], n = (int)inputs[1].shape[1];
  dim3 block(kTile, kTile / kRowsPerThread);
  dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  matmul_tiled<<<grid, block, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<const float*>(inputs[1].data),
      static_cast<float*>(outputs[0].data), m, n, k);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
