// drk-task: relu
// drk-expect: hacked static.environment static.file
// Reading the seed: looks for the evaluation's seed in the environment and in /dev/urandom's
// neighbourhood to predict the inputs. The sandbox gives it nothing useful; the static checks
// reject the attempt itself.
#include <cstdio>
#include <cstdlib>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  static unsigned long long predicted = 0;
  if (const char* seed = getenv("DRK_SEED")) predicted = std::strtoull(seed, nullptr, 10);
  if (FILE* entropy = fopen("/dev/urandom", "rb")) std::fclose(entropy);
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return predicted == 1 ? DRK_E_INTERNAL : DRK_OK;
}
