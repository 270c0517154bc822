/*
 * drk_kernel.h: the C ABI every drkernel candidate compiles against (ABI version 1).
 *
 * A candidate is one source file that defines
 *
 *     DRK_EXPORT int drk_kernel(const drk_context* ctx,
 *                               const drk_tensor* inputs, int32_t num_inputs,
 *                               drk_tensor* outputs, int32_t num_outputs);
 *
 * The harness owns every buffer: inputs are read-only, outputs are preallocated (and poisoned
 * with NaN before every call: a candidate must write every output element). The candidate
 * returns DRK_OK (0) when it wrote its outputs, or a DRK_E_* status. All work must be complete
 * when the function returns: on CPU, threads it starts are joined; on CUDA, work is queued on
 * ctx->stream only (the harness synchronises the device).
 *
 * This header needs nothing but a C99 or C++ compiler: no LibTorch, no C++ standard library.
 * docs/candidate-abi.md documents it with a worked example.
 */
#ifndef DRK_KERNEL_H_
#define DRK_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define DRK_EXTERN_C extern "C"
#else
#define DRK_EXTERN_C
#endif
#define DRK_EXPORT DRK_EXTERN_C __attribute__((visibility("default")))

#define DRK_ABI_VERSION 1
#define DRK_MAX_DIMS 8

enum drk_status {
  DRK_OK = 0,
  DRK_E_UNSUPPORTED_SHAPE = 1, /* the candidate does not handle these shapes */
  DRK_E_BAD_ARGUMENT = 2,      /* counts or dtypes are not what the candidate expects */
  DRK_E_WORKSPACE = 3,         /* the workspace request was refused */
  DRK_E_LIBRARY = 4,           /* a library-call table call failed */
  DRK_E_INTERNAL = 5
};

/* DRK_F8E4M3 and DRK_F8E5M2 are 8-bit floats (OCP FP8: e4m3 without infinities, max 448; e5m2,
 * max 57344), one byte an element. Each FP8 input is followed by its scale: a float32 tensor of
 * one element, and the input's value is (decoded byte) * scale (docs/candidate-abi.md). */
enum drk_dtype {
  DRK_F32 = 0,
  DRK_F16 = 1,
  DRK_BF16 = 2,
  DRK_F64 = 3,
  DRK_I32 = 4,
  DRK_I64 = 5,
  DRK_F8E4M3 = 6,
  DRK_F8E5M2 = 7
};
enum drk_device { DRK_CPU = 0, DRK_CUDA = 1 };

/* A dense tensor in the harness's memory. Strides are in elements, row-major unless the task
 * says otherwise; contiguous tensors have strides[ndim-1] == 1. */
typedef struct drk_tensor {
  void* data;
  int32_t dtype;  /* enum drk_dtype */
  int32_t ndim;
  int64_t shape[DRK_MAX_DIMS];
  int64_t strides[DRK_MAX_DIMS];
} drk_tensor;

struct drk_context;

/* Reference operations a candidate may call: the honest way to reuse the library for part of
 * the work. Every call is counted by the harness (library-call accounting). */
typedef struct drk_library {
  int32_t abi_version;
  /* C[m,n] = alpha * A[m,k] * op(B) + beta * C[m,n], row-major with leading dimensions.
   * op(B) = B with B of shape [k,n] when b_transposed == 0, B^T with B of shape [n,k] when 1. */
  int (*gemm_f32)(const struct drk_context* ctx, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, int b_transposed,
                  float beta, float* c, int64_t ldc);
} drk_library;

typedef struct drk_context {
  int32_t abi_version; /* DRK_ABI_VERSION of the harness */
  int32_t device;      /* enum drk_device */
  void* stream;        /* cudaStream_t on CUDA; NULL on CPU */
  int32_t max_threads; /* CPU threads the candidate may use at once (including its caller's) */
  /* Scratch memory of at least `bytes`, aligned to 256 bytes, valid until drk_kernel returns;
   * NULL when refused. On CUDA it is device memory. */
  void* (*workspace)(const struct drk_context* ctx, size_t bytes);
  const drk_library* lib;
  void* harness; /* opaque: belongs to the harness */
} drk_context;

typedef int (*drk_kernel_fn)(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                             drk_tensor* outputs, int32_t num_outputs);

#define DRK_KERNEL_SYMBOL "drk_kernel"

#endif /* DRK_KERNEL_H_ */
