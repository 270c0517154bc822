// Honest ReLU for the FP8 variants on CUDA (relu@float8_e4m3fn, relu@float8_e5m2): each byte
// converted by CUDA's own FP8 intrinsic, times the scale (read on the device), ReLU, rounded to the
// bfloat16 output. Four bytes a thread with 32-bit loads where the tensor allows it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "drk_kernel.h"

__device__ __forceinline__ __nv_bfloat16 relu_of(uint8_t byte, __nv_fp8_interpretation_t format, float scale) {
  const float value = __half2float(__half(__nv_cvt_fp8_to_halfraw(byte, format))) * scale;
  return __float2bfloat16_rn(value > 0.0f ? value : 0.0f);
}

__global__ void relu_fp8_vec4(const uint32_t* __restrict__ x, __nv_bfloat16* __restrict__ y, int64_t n4,
                              __nv_fp8_interpretation_t format, const float* __restrict__ scale_at) {
  const float scale = *scale_at;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
    const uint32_t word = x[i];
    for (int b = 0; b < 4; ++b) y[4 * i + b] = relu_of(static_cast<uint8_t>(word >> (8 * b)), format, scale);
  }
}

__global__ void relu_fp8_tail(const uint8_t* __restrict__ x, __nv_bfloat16* __restrict__ y, int64_t begin, int64_t n,
                              __nv_fp8_interpretation_t format, const float* __restrict__ scale_at) {
  const int64_t i = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = relu_of(x[i], format, *scale_at);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[1].dtype != DRK_F32 || outputs[0].dtype != DRK_BF16)
    return DRK_E_BAD_ARGUMENT;
  if (inputs[0].dtype != DRK_F8E4M3 && inputs[0].dtype != DRK_F8E5M2) return DRK_E_BAD_ARGUMENT;
  const __nv_fp8_interpretation_t format = inputs[0].dtype == DRK_F8E4M3 ? __NV_E4M3 : __NV_E5M2;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  const uint8_t* x = static_cast<const uint8_t*>(inputs[0].data);
  const float* scale = static_cast<const float*>(inputs[1].data);
  __nv_bfloat16* y = static_cast<__nv_bfloat16*>(outputs[0].data);
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 4 == 0;
  const int64_t n4 = aligned ? n / 4 : 0;
  if (n4 > 0) {
    int64_t blocks = (n4 + 255) / 256;
    if (blocks > 132 * 32) blocks = 132 * 32;
    relu_fp8_vec4<<<(unsigned)blocks, 256, 0, stream>>>(reinterpret_cast<const uint32_t*>(x), y, n4, format, scale);
  }
  if (n4 * 4 < n) {
    const int64_t rest = n - n4 * 4;
    relu_fp8_tail<<<(unsigned)((rest + 255) / 256), 256, 0, stream>>>(x, y, n4 * 4, n, format, scale);
  }
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
