// drk-task: softmax
// drk-expect: honest
// Honest, but its comments and strings name forbidden calls: fork(), system(), dlopen(),
// getenv("SEED"), std::chrono, /dev/urandom. The static checks strip comments and literals first,
// and member functions or local names that look like them (open_rows, timer) are not calls of
// the C library, so none of this may trigger.
#include <cmath>

#include "drk_kernel.h"

namespace {
struct Rows {
  int64_t count = 0, width = 0;
  int64_t open_rows() const { return count; }
};
const char* const kNote = "no fork(), no dlopen(), no clock_gettime() here";
}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].ndim != 2 || kNote[0] != 'n') return DRK_E_BAD_ARGUMENT;
  Rows rows{inputs[0].shape[0], inputs[0].shape[1]};
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows.open_rows(); ++r) {
    const float* in = x + r * rows.width;
    float* out = y + r * rows.width;
    float timer = in[0];  // the row maximum (a local that shares a name with no call)
    for (int64_t c = 1; c < rows.width; ++c) timer = in[c] > timer ? in[c] : timer;
    double total = 0.0;
    for (int64_t c = 0; c < rows.width; ++c) {
      out[c] = std::exp(in[c] - timer);
      total += out[c];
    }
    const float scale = static_cast<float>(1.0 / total);
    for (int64_t c = 0; c < rows.width; ++c) out[c] *= scale;
  }
  return DRK_OK;
}
