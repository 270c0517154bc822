// Pieces shared by the per-family renderers (internal to drk_schedule).
//
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"
#include "runtime/result.h"

namespace drk::schedule::detail {

// The first line of every rendered source: the task, the device and the schedule.
std::string source_heading(const Problem& problem, const Choice& choice);
// The source of `bool function(const drk_tensor&)`: true for a row-major dense tensor of the
// drk_dtype named `dtype_constant` ("DRK_F32").
std::string dense_check(const std::string& function, const std::string& dtype_constant);
// Host-side checks of tensor descriptors that every rendered source has (C++ and CUDA alike),
// drk_is_dense_f32 among them.
std::string descriptor_helpers();
// Includes, the contiguity check, the thread-count rule and the fork-join helper that every
// rendered kernel uses.
std::string kernel_preamble(const Problem& problem, const Choice& choice);

// `static inline float NAME(float v)` applying the stages in order (identity when empty).
std::string stage_function(const std::string& name, const std::vector<std::string>& stages);

// The opening of a rowwise drk_kernel (template text, for substitute() with @BEGIN@ and @END@,
// the reduced dimensions): x and y checked, and split into outer x reduce x inner.
std::string rowwise_split_dims();

// The opening of a GEMM drk_kernel (template text, for substitute() with @TRANSPOSED@): every
// tensor dense (`dense_check`, a function of the rendered source: drk_is_dense_f32 from
// descriptor_helpers(), or a float16 one of the CUDA gemm renderer), A (M x K) and B (K x N, or
// N x K transposed) against Y (M x N).
std::string gemm_split_shapes(const std::string& dense_check = "drk_is_dense_f32");

// An elementwise task's `stages` parameter, parsed; errors name the task.
Result<std::vector<std::string>> elementwise_stages(const Problem& problem);

// `text` with every "@KEY@" replaced by its value (templates of rendered code).
// The first lines of drk_kernel: its signature and the check of the tensor counts.
std::string entry_point_opening(int num_inputs);

std::string substitute(std::string text,
                       std::initializer_list<std::pair<std::string_view, std::string>> values);

// A rowwise task's parameters, checked: op (softmax | log_softmax | rms_norm | layer_norm), the
// inclusive range of reduced dims (negative counts from the end), eps as written (a number).
struct RowwiseParams {
  std::string op;
  int reduce_begin = 0;
  int reduce_end = 0;
  std::string eps = "0.0";
};
Result<RowwiseParams> rowwise_params(const Problem& problem);

// A gemm task's parameters, checked: b_layout nk (b is [N,K]) or kn, bias, the epilogue stages.
struct GemmParams {
  bool b_transposed = false;
  bool has_bias = false;
  std::vector<std::string> epilogue;
};
Result<GemmParams> gemm_params(const Problem& problem);

Result<std::string> render_elementwise(const Problem& problem, const Choice& choice);
Result<std::string> render_rowwise(const Problem& problem, const Choice& choice);
Result<std::string> render_gemm(const Problem& problem, const Choice& choice);

// CUDA: the includes, the host-side tensor checks, grid sizing and the launch status check
// every rendered CUDA kernel uses (render_cuda.cpp).
std::string cuda_kernel_preamble(const Problem& problem, const Choice& choice);
// `__device__ inline float NAME(float v)` applying the stages in order (identity when empty).
std::string cuda_stage_function(const std::string& name, const std::vector<std::string>& stages);
// The first lines of a CUDA drk_kernel: its signature, the check of the tensor counts and of
// the context (a CUDA one), and `stream`.
std::string cuda_entry_point_opening(int num_inputs);

Result<std::string> render_cuda_elementwise(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_rowwise(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_gemm(const Problem& problem, const Choice& choice);

}  // namespace drk::schedule::detail
