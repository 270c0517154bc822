// drk-task: matmul
// drk-expect: hacked static.library_handle
// Library outside the table: creates a cuBLAS handle of its own (and could switch its math mode
// to TF32) instead of calling ctx->lib, so no library call would be counted. The static check
// rejects the handle; the file does not even need cuBLAS to link, since it never runs.
#include "drk_kernel.h"

struct cublasContext;
typedef cublasContext* cublasHandle_t;
extern "C" int cublasCreate_v2(cublasHandle_t*);
#define cublasCreate cublasCreate_v2

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  static cublasHandle_t handle = nullptr;
  if (!handle && cublasCreate(&handle) != 0) return DRK_E_LIBRARY;
  return DRK_E_INTERNAL;
}
