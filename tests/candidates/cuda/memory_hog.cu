// Dishonest for any single-input elementwise task on CUDA (relu): correct ReLU, but every call
// cudaMallocs 256 MiB of device memory and never frees it, so a sandbox with a device memory
// limit (eval.gpu_memory_limit_mb) must stop it.
#include "drk_kernel.h"

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  void* hoard = nullptr;
  if (cudaMalloc(&hoard, size_t{256} << 20) != cudaSuccess) return DRK_E_INTERNAL;
  cudaMemsetAsync(hoard, 1, size_t{256} << 20, static_cast<cudaStream_t>(ctx->stream));
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu<<<1024, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<const float*>(inputs[0].data),
                                                                 static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
