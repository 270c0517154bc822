// drk-task: matmul
// drk-expect: hacked harness_symbol
// Reaching the harness outside the ABI: no header needed, a declaration of LibTorch's
// at::set_num_threads is enough for the dynamic linker to bind the call into the LibTorch the
// sandbox has loaded. The candidate gives the library table's LibTorch several times
// ctx->max_threads, then computes the product through ctx->lib->gemm_f32, whose threads now
// outnumber what the candidate may use (the reference on its side keeps max_threads). The sandbox
// reads the object's imports before dlopen and refuses it: harness_symbol, "imports
// at::set_num_threads(int) from libtorch_cpu.so".
#include "drk_kernel.h"

namespace at {
void set_num_threads(int);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2) return DRK_E_BAD_ARGUMENT;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
  if (inputs[1].shape[0] != k) return DRK_E_UNSUPPORTED_SHAPE;
  at::set_num_threads(8 * ctx->max_threads);
  int status = ctx->lib->gemm_f32(ctx, m, n, k, 1.0f, static_cast<const float*>(inputs[0].data), k,
                                  static_cast<const float*>(inputs[1].data), n, /*b_transposed=*/0, 0.0f,
                                  static_cast<float*>(outputs[0].data), n);
  return status == DRK_OK ? DRK_OK : DRK_E_LIBRARY;
}
