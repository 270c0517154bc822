// Pieces shared by the per-family renderers (internal to drk_schedule).
//
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"
#include "base/result.h"

namespace drk::schedule::detail {

// The first line of every rendered source: the task, the device and the schedule.
std::string source_heading(const Problem& problem, const Choice& choice);
// The source of `bool function(const drk_tensor&)`: true for a row-major dense tensor of the
// drk_dtype named `dtype_constant` ("DRK_F32").
std::string dense_check(const std::string& function, const std::string& dtype_constant);

// C++ (cpu) element access as float: drk_get widens an element (a float, or a 16-bit one of
// `precision` held as uint16_t) and drk_put(out, v) stores v, rounded to nearest even once for a
// 16-bit element, as LibTorch's 16-bit kernels do (a NaN stays a NaN). Overloaded on the pointer
// type, so one loop reads or writes either the task's tensors or a float workspace. For a 16-bit
// `precision` also drk_is_dense_16, the dense_check of a tensor of it.
std::string cpu_element_access(Precision precision);
// An FP8 precision's pieces, for C++ and CUDA alike (rendered code for an anonymous namespace):
// drk_is_dense_f8, the dense_check of a tensor of the format, and drk_is_scale, whether a tensor
// is a dense float32 of one element (an FP8 input's scale). `precision` is an FP8 one.
std::string float8_checks(Precision precision);
// C++: drk_fp8_value(byte), the value of a finite byte of the FP8 `precision`.
std::string cpu_float8_value(Precision precision);
// Host-side checks of tensor descriptors that every rendered source has (C++ and CUDA alike),
// drk_is_dense_f32 among them.
std::string descriptor_helpers();
// Includes, the contiguity check, the thread-count rule and the fork-join helper that every
// rendered kernel uses.
std::string kernel_preamble(const Problem& problem, const Choice& choice);

// `static inline float NAME(float v)` applying the stages in order (identity when empty).
// `extra_parameters` (", int64_t c, const float* add_bias") lets the stages read more than v.
std::string stage_function(const std::string& name, const std::vector<std::string>& stages,
                           const std::string& extra_parameters = "");

// The opening of a rowwise drk_kernel (template text, for substitute() with @BEGIN@ and @END@,
// the reduced dimensions): x and y checked with `dense` (a dense_check function: float32 by
// default), and split into outer x reduce x inner.
std::string rowwise_split_dims(const std::string& dense = "drk_is_dense_f32");

// The first lines of a drk_kernel body that takes dense tensors only: every input and the output
// pass `dense_check` (a function of the rendered source) or the kernel returns DRK_E_BAD_ARGUMENT.
std::string every_tensor_dense(const std::string& dense_check = "drk_is_dense_f32");

// The opening of a GEMM drk_kernel (template text, for substitute() with @TRANSPOSED@): every
// tensor dense (`dense_check`, a function of the rendered source: drk_is_dense_f32 from
// descriptor_helpers(), or a float16 one of the CUDA gemm renderer), A (M x K) and B (K x N, or
// N x K transposed) against Y (M x N).
std::string gemm_split_shapes(const std::string& dense_check = "drk_is_dense_f32");
// The opening of a batched GEMM drk_kernel (template text, @TRANSPOSED@): a [B,M,K], b [B,K,N]
// (or [B,N,K] transposed) and y [B,M,N], dense (`dense_check`, as gemm_split_shapes), the same B.
std::string batched_gemm_split_shapes(const std::string& dense_check = "drk_is_dense_f32");
// After either opening (template text, @BIAS@): the optional bias [N] checked, an early return
// when `elements` (an expression of M, N, batches) is 0, and the pointers a, b, y and bias.
std::string gemm_operands(const std::string& elements);

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

// A reduction task's parameters, checked: op (sum | mean | max), the reduced dim (negative
// counts from the end), keepdim.
struct ReduceParams {
  std::string op;
  int dim = 0;
  bool keepdim = false;
};
Result<ReduceParams> reduce_params(const Problem& problem);
// The opening of a reduction drk_kernel after the tensor-count check: x and y checked with `dense`
// (a dense_check function; float32 by default; y is x
// without `dim`, or with it of extent 1 under keepdim), x split into outer x reduce x inner
// (int64_t outer, reduce, inner in scope), DRK_OK at once when there is no output element.
std::string reduce_split_dims(const ReduceParams& params, const std::string& dense = "drk_is_dense_f32");

// The functions of a CPU GEMM kernel (render_gemm.cpp; rendered code for an anonymous
// namespace), over rows [row_begin, row_end) of one matrix y[M,N]: drk_epilogue, drk_finish_rows
// (bias and epilogue), drk_bias_rows, drk_epilogue_rows and, unless the choice uses the library,
// drk_product_rows(a, b, y, bias, N, K, row_begin, row_end). `choice` is a gemm or a batched_gemm
// choice (their first six knobs are the same, gemm_knob's positions).
std::string gemm_row_functions(const GemmParams& params, const Choice& choice);
// The calls that apply bias and epilogue after the product to rows [begin, end) of the matrix at
// `y` (an expression), one parallel pass each, in order; none when the own product fused them.
std::vector<std::string> gemm_finish_calls(const GemmParams& params, const Choice& choice,
                                           const std::string& y);
// Statements computing y = a * op(b) for one matrix through ctx->lib->gemm_f32 (M, N, K in
// scope), returning DRK_E_LIBRARY when the library is missing or fails.
std::string gemm_library_call(bool b_transposed, const std::string& a, const std::string& b,
                              const std::string& y);

Result<std::string> render_elementwise(const Problem& problem, const Choice& choice);
Result<std::string> render_rowwise(const Problem& problem, const Choice& choice);
Result<std::string> render_gemm(const Problem& problem, const Choice& choice);
Result<std::string> render_reduction(const Problem& problem, const Choice& choice);
Result<std::string> render_batched_gemm(const Problem& problem, const Choice& choice);
Result<std::string> render_conv2d(const Problem& problem, const Choice& choice);
Result<std::string> render_cross_entropy(const Problem& problem, const Choice& choice);
Result<std::string> render_attention(const Problem& problem, const Choice& choice);

// CUDA: the includes, the host-side tensor checks, grid sizing and the launch status check
// every rendered CUDA kernel uses (render_cuda.cpp).
std::string cuda_kernel_preamble(const Problem& problem, const Choice& choice);
// CUDA's names for a 16-bit element type (float16: __half and cuda_fp16.h; bfloat16:
// __nv_bfloat16 and cuda_bf16.h), for the renderers' templates, and the dense_check of a tensor
// of it.
struct CudaSixteenBit {
  std::string include;     // "\n#include <cuda_fp16.h>\n", before the kernels' namespace
  std::string type;        // __half
  std::string pair_type;   // __half2
  std::string to_float;    // __half2float
  std::string from_float;  // __float2half_rn: to nearest even, a NaN stays a NaN
  std::string from_bits;   // __ushort_as_half
  std::string make_pair;   // __halves2half2
  std::string dense;       // drk_is_dense_f16, defined by dense_check(dense, dtype)
  std::string dtype;       // DRK_F16
};
// `precision` is float16 or bfloat16.
CudaSixteenBit cuda_sixteen_bit(Precision precision);
// The element type of a CUDA kernel's tensors and its conversions (rendered code for an anonymous
// namespace): drk_element (float, or `names`' 16-bit type), drk_widen to float, drk_narrow back
// (once, to nearest even), drk_load4 / drk_store4 of four neighbours (a 16-byte float4, or 8
// bytes of a 16-bit type). drk_widen and drk_load4 of float are declared in both, so a float
// value never converts to a 16-bit type on the way. Before cuda_row_statistics().
std::string cuda_element_access(const std::optional<CudaSixteenBit>& names);
// `__device__ inline float NAME(float v)` applying the stages in order (identity when empty).
// `extra_parameters` (", int64_t c, const float* add_bias") lets the stages read more than v.
std::string cuda_stage_function(const std::string& name, const std::vector<std::string>& stages,
                                const std::string& extra_parameters = "");
// The names of a task's inputs from position `first` on: tensors its epilogue stages read by the
// output channel c (conv2d_relu_biasadd's "v + add_bias[c]"). invalid_argument naming the task
// when a name is not a C identifier or is v or c (the stages' own names).
Result<std::vector<std::string>> channel_input_names(const Problem& problem, size_t first);
// The CUDA GEMM source of render_cuda_gemm or, `batched`, of render_cuda_batched_gemm (a [B,M,K],
// b [B,K,N] or [B,N,K], y [B,M,N], float32): the same product kernel with blockIdx.z over the
// batch, the library once per entry. `choice` is a gemm or a batched_gemm choice (their first six
// knobs are the same, cuda_gemm_knob's positions).
Result<std::string> cuda_gemm_source(const Problem& problem, const Choice& choice, bool batched);
// The first lines of a CUDA drk_kernel: its signature, the check of the tensor counts and of
// the context (a CUDA one), and `stream`.
std::string cuda_entry_point_opening(int num_inputs);

// The row statistics of CUDA rowwise and cross_entropy kernels (render_cuda.cpp; rendered code
// for an anonymous namespace). cuda_stat_protocol: struct drk_stat {m, s, c} and the per-pass
// templates drk_identity<P>, drk_add<P>, drk_merge<P> every op specialises. cuda_single_statistic:
// pass 1 and drk_between of an op with one statistic pass. cuda_softmax_statistics: the row
// maximum m and the sum s of exp(v - m), in one online pass or two (kStatPasses, drk_result).
// cuda_stat_reductions: drk_warp_all, drk_block_all and drk_slices_all (need kWarps).
// cuda_row_statistics: drk_row_pass<P> over a contiguous row split between `parts` threads
// (float4 loads when kWidth == 4 and the row allows them) and drk_row_result<kBlock>, the row's
// drk_result in each of them.
std::string cuda_stat_protocol();
std::string cuda_single_statistic();
std::string cuda_softmax_statistics(bool online);
std::string cuda_stat_reductions();
std::string cuda_row_statistics();

Result<std::string> render_cuda_elementwise(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_rowwise(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_gemm(const Problem& problem, const Choice& choice);
// The gemm family's FP8 tasks (render_cuda_gemm_float8.cpp: mma.sync FP8 tensor cores).
Result<std::string> render_cuda_gemm_float8(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_reduction(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_batched_gemm(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_conv2d(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_cross_entropy(const Problem& problem, const Choice& choice);
Result<std::string> render_cuda_attention(const Problem& problem, const Choice& choice);

}  // namespace drk::schedule::detail
