// Dtype variants of a task: `relu@bfloat16` is the task `relu` with its floating inputs and its
// output in bfloat16 (docs/tasks.md, "Dtype variants"). Every task whose floating tensors are
// float32 has a float16, a bfloat16 and two FP8 variants on every device it runs on; the catalog
// makes them at load (TaskCatalog::find resolves the names). A variant keeps the task's shapes,
// draws and reference; its correctness reference is evaluated in float64 on the rounded inputs and
// rounded to the variant's output dtype, its tolerance is the task's for that dtype (KernelBench's
// 1e-2 unless the task's YAML declares one).
//
// An FP8 variant (`matmul@float8_e4m3fn`, `relu@float8_e5m2`) quantises each floating input to
// that 8-bit format with a per-tensor scale, as FP8 inference does: the input X becomes X (one
// byte an element) followed by X_scale (float32, one element), and X's value is the decoded byte
// times the scale (kernels/catalog/float8.h). Its output is bfloat16, like torch._scaled_mm's
// usual out_dtype: an FP8 output would need a scale of its own, which is a recipe's choice.
//
// Which device can run which dtype is `dtype_runs_on`: a GPU runs bfloat16 from compute
// capability 8.0 (Ampere) on, float16 from 5.3, FP8 from 8.9 (Ada; Hopper is 9.0), the first with
// FP8 tensor cores; the CPU harness runs them all (the candidate ABI carries the dtype of every
// tensor: kernels/abi/drk_kernel.h).
//
// Thread-safety: pure functions. Errors: invalid_argument / unsupported naming the task, the dtype
// and the fix.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "kernels/catalog/task.h"

namespace drk::kernels {

// "relu@bfloat16": the separator between a task's name and its variant's dtype.
inline constexpr char kDtypeVariantSeparator = '@';
// The dtypes every float32 task has a variant in.
inline constexpr DType kVariantDtypes[] = {DType::float16, DType::bfloat16, DType::float8_e4m3fn, DType::float8_e5m2};
// An FP8 variant's output dtype.
inline constexpr DType kFloat8OutputDtype = DType::bfloat16;

// `task` with its floating tensors in `dtype`, named NAME@DTYPE. invalid_argument when the task's
// floating tensors are not float32 (a float16 task has no variants) or `dtype` is no variant dtype.
Result<Task> dtype_variant(const Task& task, DType dtype);

// The name of the scale input that follows the FP8 input `input`: "a_scale" for "a".
std::string float8_scale_name(const std::string& input);

// {"relu", "bfloat16"} for "relu@bfloat16"; {"relu", ""} for "relu".
std::pair<std::string_view, std::string_view> split_variant_name(std::string_view name);

// Whether a device runs `dtype`: unsupported, with the reason, when a GPU of compute capability
// `compute_capability` (major * 10 + minor) cannot; 0 for the CPU.
Status dtype_runs_on(DType dtype, DeviceKind device, int compute_capability);

}  // namespace drk::kernels
