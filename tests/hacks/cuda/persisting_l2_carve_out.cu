// drk-task: relu
// drk-expect: hacked static.device_setting static.stream
// Persisting-L2 carve-out: reserves L2 for persisting accesses and marks the input as persisting
// on ctx->stream, so that the data survives the harness's L2 flush between timed calls.
#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 64u << 20);
  cudaStreamAttrValue window = {};
  window.accessPolicyWindow.base_ptr = inputs[0].data;
  window.accessPolicyWindow.num_bytes = static_cast<size_t>(n) * sizeof(float);
  window.accessPolicyWindow.hitRatio = 1.0f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
  relu<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                                         static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
