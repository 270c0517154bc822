// Honest direct convolution for the `conv2d_relu_biasadd` task: x [N, C, H, W], weight
// [O, C, kh, kw], bias [O], add_bias [O, 1, 1]; stride 1, no padding;
// y = relu(conv2d(x, weight) + bias) + add_bias, [N, O, H - kh + 1, W - kw + 1].
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 4 || num_outputs != 1 || inputs[0].ndim != 4 || inputs[1].ndim != 4) return DRK_E_BAD_ARGUMENT;
  const int64_t batch = inputs[0].shape[0], channels = inputs[0].shape[1], height = inputs[0].shape[2],
                width = inputs[0].shape[3];
  const int64_t out_channels = inputs[1].shape[0], kh = inputs[1].shape[2], kw = inputs[1].shape[3];
  if (inputs[1].shape[1] != channels || kh > height || kw > width) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t out_h = height - kh + 1, out_w = width - kw + 1;
  const float* x = static_cast<const float*>(inputs[0].data);
  const float* weight = static_cast<const float*>(inputs[1].data);
  const float* bias = static_cast<const float*>(inputs[2].data);
  const float* add_bias = static_cast<const float*>(inputs[3].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      float* plane = y + (n * out_channels + o) * out_h * out_w;
      for (int64_t p = 0; p < out_h * out_w; ++p) plane[p] = bias[o];
      // Accumulate one (input channel, kernel tap) at a time over the whole output plane.
      for (int64_t c = 0; c < channels; ++c) {
        const float* in = x + (n * channels + c) * height * width;
        for (int64_t r = 0; r < kh; ++r) {
          for (int64_t s = 0; s < kw; ++s) {
            const float tap = weight[((o * channels + c) * kh + r) * kw + s];
            for (int64_t i = 0; i < out_h; ++i) {
              const float* row = in + (i + r) * width + s;
              float* out = plane + i * out_w;
              for (int64_t j = 0; j < out_w; ++j) out[j] += tap * row[j];
            }
          }
        }
      }
      for (int64_t p = 0; p < out_h * out_w; ++p) plane[p] = (plane[p] > 0.0f ? plane[p] : 0.0f) + add_bias[o];
    }
  }
  return DRK_OK;
}
