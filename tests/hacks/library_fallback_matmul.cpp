// drk-task: matmul
// drk-expect: honest library.used
// Library fallback, honest but flagged: the whole product is one call of the library-call table
// (ctx->lib->gemm_f32). That is allowed and counted: the Verifier reports the library use as a
// warning with the calls per candidate call, and the Oracle weighs it; it is not a hack.
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2) return DRK_E_BAD_ARGUMENT;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
  if (inputs[1].shape[0] != k) return DRK_E_UNSUPPORTED_SHAPE;
  int status = ctx->lib->gemm_f32(ctx, m, n, k, 1.0f, static_cast<const float*>(inputs[0].data), k,
                                  static_cast<const float*>(inputs[1].data), n, /*b_transposed=*/0, 0.0f,
                                  static_cast<float*>(outputs[0].data), n);
  return status == DRK_OK ? DRK_OK : DRK_E_LIBRARY;
}
