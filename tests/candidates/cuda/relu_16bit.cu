// Honest ReLU for the relu@float16 and relu@bfloat16 variants on CUDA: both formats keep the
// sign in the top bit, so max(x, 0) is the element itself or +0, exactly. Eight elements per
// thread with 128-bit loads where the tensor allows it, queued on ctx->stream.
#include "drk_kernel.h"

// Each 32-bit word holds two elements: a lane whose sign bit is set becomes 0.
__device__ __forceinline__ uint32_t relu_pair(uint32_t word) {
  const uint32_t negative = ((word & 0x80008000u) >> 15) * 0xFFFFu;
  return word & ~negative;
}

__global__ void relu16_vec8(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n8) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n8; i += (int64_t)gridDim.x * blockDim.x) {
    uint4 v = x[i];
    v.x = relu_pair(v.x);
    v.y = relu_pair(v.y);
    v.z = relu_pair(v.z);
    v.w = relu_pair(v.w);
    y[i] = v;
  }
}

__global__ void relu16_tail(const uint16_t* __restrict__ x, uint16_t* __restrict__ y, int64_t begin, int64_t n) {
  int64_t i = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = (x[i] & 0x8000u) ? uint16_t{0} : x[i];
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return DRK_E_BAD_ARGUMENT;
  if ((inputs[0].dtype != DRK_F16 && inputs[0].dtype != DRK_BF16) || outputs[0].dtype != inputs[0].dtype)
    return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  const uint16_t* x = static_cast<const uint16_t*>(inputs[0].data);
  uint16_t* y = static_cast<uint16_t*>(outputs[0].data);
  int64_t n8 = n / 8;
  if (n8 > 0) {
    int64_t blocks = (n8 + 255) / 256;
    if (blocks > 132 * 32) blocks = 132 * 32;
    relu16_vec8<<<(unsigned)blocks, 256, 0, stream>>>(reinterpret_cast<const uint4*>(x), reinterpret_cast<uint4*>(y), n8);
  }
  if (n8 * 8 < n) relu16_tail<<<1, 256, 0, stream>>>(x, y, n8 * 8, n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
