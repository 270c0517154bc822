// drk-task: conv2d
// drk-expect: hacked harness_symbol
// Slowing the reference down from outside the ABI: a correct direct convolution, plus one call
// into the LibTorch that the CUDA sandbox runs the reference with, through declarations only:
// at::globalContext().setUserEnabledCuDNN(false). The reference's conv2d then falls back from
// cuDNN to a slow native path and the speedup is inflated, while every correctness check passes.
// The sandbox reads the object's imports before dlopen and refuses it: harness_symbol, "imports
// at::globalContext() from libtorch_cpu.so; imports at::Context::setUserEnabledCuDNN(bool) ...".
#include "drk_kernel.h"

namespace at {
struct Context {
  void setUserEnabledCuDNN(bool);
};
Context& globalContext();
}  // namespace at

// y[n, k, i, j] = sum over c, r, s of x[n, c, i + r, j + s] * w[k, c, r, s]: stride 1, no padding.
__global__ void conv2d_direct(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                              int64_t batch, int64_t channels, int64_t height, int64_t width, int64_t filters,
                              int64_t kh, int64_t kw) {
  const int64_t out_h = height - kh + 1, out_w = width - kw + 1;
  const int64_t total = batch * filters * out_h * out_w;
  for (int64_t index = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; index < total;
       index += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = index % out_w, i = (index / out_w) % out_h, k = (index / (out_w * out_h)) % filters;
    const int64_t n = index / (out_w * out_h * filters);
    float sum = 0.0f;
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = x + ((n * channels + c) * height + i) * width + j;
      const float* filter = w + (k * channels + c) * kh * kw;
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s) sum += plane[r * width + s] * filter[r * kw + s];
    }
    y[index] = sum;
  }
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 4 || inputs[1].ndim != 4) return DRK_E_BAD_ARGUMENT;
  const int64_t batch = inputs[0].shape[0], channels = inputs[0].shape[1];
  const int64_t height = inputs[0].shape[2], width = inputs[0].shape[3];
  const int64_t filters = inputs[1].shape[0], kh = inputs[1].shape[2], kw = inputs[1].shape[3];
  if (inputs[1].shape[1] != channels || kh > height || kw > width) return DRK_E_UNSUPPORTED_SHAPE;
  at::globalContext().setUserEnabledCuDNN(false);
  const int64_t total = batch * filters * (height - kh + 1) * (width - kw + 1);
  int64_t blocks = (total + 255) / 256;
  if (blocks > 132 * 32) blocks = 132 * 32;
  conv2d_direct<<<(unsigned)blocks, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<const float*>(inputs[1].data),
      static_cast<float*>(outputs[0].data), batch, channels, height, width, filters, kh, kw);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
