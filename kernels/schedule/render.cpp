#include "kernels/schedule/render.h"

#include <cstdlib>

#include "kernels/schedule/render_parts.h"
#include "kernels/schedule/stages.h"

namespace drk::schedule {
namespace detail {
namespace {

Result<int> parse_dim(const Problem& problem, const std::string& key) {
  auto text = problem.param(key);
  if (!text) return text.error();
  char* end = nullptr;
  const long value = std::strtol(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0' || value < -8 || value > 7) {
    return make_error(Errc::parse_error, "task '" + problem.task + "': " + key + " '" + *text +
                                             "' is not a dimension index in [-8, 7]");
  }
  return static_cast<int>(value);
}

}  // namespace

Result<RowwiseParams> rowwise_params(const Problem& problem) {
  RowwiseParams params;
  auto op = problem.param("op");
  if (!op) return op.error();
  if (*op != "softmax" && *op != "log_softmax" && *op != "rms_norm" && *op != "layer_norm") {
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "': rowwise op '" + *op +
                          "' is unknown: use softmax, log_softmax, rms_norm or layer_norm");
  }
  params.op = *op;
  auto reduce_begin = parse_dim(problem, "reduce_begin");
  if (!reduce_begin) return reduce_begin.error();
  auto reduce_end = parse_dim(problem, "reduce_end");
  if (!reduce_end) return reduce_end.error();
  params.reduce_begin = *reduce_begin;
  params.reduce_end = *reduce_end;
  if (params.op == "rms_norm" || params.op == "layer_norm") {
    params.eps = problem.param_or("eps", "1e-5");
    char* end = nullptr;
    std::strtod(params.eps.c_str(), &end);
    if (params.eps.empty() || *end != '\0') {
      return make_error(Errc::parse_error,
                        "task '" + problem.task + "': eps '" + params.eps + "' is not a number");
    }
  }
  return params;
}

Result<GemmParams> gemm_params(const Problem& problem) {
  GemmParams params;
  const std::string layout = problem.param_or("b_layout", "kn");
  if (layout != "kn" && layout != "nk") {
    return make_error(Errc::invalid_argument, "task '" + problem.task + "': b_layout '" + layout +
                                                  "' is unknown: use kn ([K,N]) or nk ([N,K])");
  }
  const std::string bias_text = problem.param_or("bias", "false");
  if (bias_text != "true" && bias_text != "false") {
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "': bias '" + bias_text + "' is not true|false");
  }
  auto epilogue = parse_stages(problem.param_or("epilogue", "v"));
  if (!epilogue) {
    return make_error(Errc::parse_error, "task '" + problem.task + "': " + epilogue.error().message);
  }
  params.b_transposed = layout == "nk";
  params.has_bias = bias_text == "true";
  params.epilogue = std::move(*epilogue);
  return params;
}

Result<ReduceParams> reduce_params(const Problem& problem) {
  ReduceParams params;
  auto op = problem.param("op");
  if (!op) return op.error();
  if (*op != "sum" && *op != "mean" && *op != "max") {
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "': reduction op '" + *op + "' is unknown: use sum, mean or max");
  }
  params.op = *op;
  auto dim = parse_dim(problem, "dim");
  if (!dim) return dim.error();
  params.dim = *dim;
  const std::string keepdim = problem.param_or("keepdim", "false");
  if (keepdim != "true" && keepdim != "false") {
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "': keepdim '" + keepdim + "' is not true|false");
  }
  params.keepdim = keepdim == "true";
  return params;
}

std::string reduce_split_dims(const ReduceParams& params, const std::string& dense) {
  return substitute(R"(
  const drk_tensor& x = inputs[0];
  drk_tensor& y = outputs[0];
  if (!@DENSE@(x) || !@DENSE@(y)) return DRK_E_BAD_ARGUMENT;
  const int dim = @DIM@ < 0 ? @DIM@ + x.ndim : @DIM@;
  if (dim < 0 || dim >= x.ndim) return DRK_E_UNSUPPORTED_SHAPE;
  // y is x without dim (keepdim false) or with dim of extent 1 (keepdim true).
  const bool keepdim = @KEEPDIM@;
  if (y.ndim != (keepdim ? x.ndim : x.ndim - 1)) return DRK_E_UNSUPPORTED_SHAPE;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < x.ndim; ++d) {
    if (d == dim) {
      if (keepdim && y.shape[d] != 1) return DRK_E_UNSUPPORTED_SHAPE;
      continue;
    }
    const int y_dim = keepdim || d < dim ? d : d - 1;
    if (y.shape[y_dim] != x.shape[d]) return DRK_E_UNSUPPORTED_SHAPE;
    (d < dim ? outer : inner) *= x.shape[d];
  }
  const int64_t reduce = x.shape[dim];
  // The maximum of nothing is undefined (torch refuses it).
  if (@IS_MAX@ && reduce == 0) return DRK_E_UNSUPPORTED_SHAPE;
  if (outer * inner == 0) return DRK_OK;
)",
                    {{"DIM", std::to_string(params.dim)},
                     {"KEEPDIM", params.keepdim ? "true" : "false"},
                     {"IS_MAX", params.op == "max" ? "true" : "false"},
                     {"DENSE", dense}});
}

std::string source_heading(const Problem& problem, const Choice& choice) {
  return "// drkernel embedded policy: task '" + problem.task + "', " +
         (choice.device == Device::cuda ? "cuda " : "") + std::string(family_name(choice.family)) +
         " schedule: " + choice.describe() + "\n";
}

std::string cpu_element_access(Precision precision) {
  std::string source = R"(
[[maybe_unused]] inline float drk_get(float value) { return value; }
[[maybe_unused]] inline void drk_put(float* out, float value) { *out = value; }
)";
  if (precision == Precision::float16) {
    source += R"(
[[maybe_unused]] inline float drk_get(uint16_t bits) {
  _Float16 half;
  __builtin_memcpy(&half, &bits, sizeof half);
  return static_cast<float>(half);
}

[[maybe_unused]] inline void drk_put(uint16_t* out, float value) {
  const _Float16 half = static_cast<_Float16>(value);
  __builtin_memcpy(out, &half, sizeof half);
}
)";
  } else if (precision == Precision::bfloat16) {
    source += R"(
[[maybe_unused]] inline float drk_get(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  __builtin_memcpy(&value, &wide, sizeof value);
  return value;
}

// Round to nearest even; a NaN stays a (quiet) NaN. A select, not a branch, so loops vectorise.
[[maybe_unused]] inline void drk_put(uint16_t* out, float value) {
  uint32_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  *out = static_cast<uint16_t>((nan ? bits | 0x400000u : rounded) >> 16);
}
)";
  }
  if (precision != Precision::float32) {
    source += dense_check("drk_is_dense_16", precision == Precision::float16 ? "DRK_F16" : "DRK_BF16");
  }
  return source;
}

std::string float8_checks(Precision precision) {
  return dense_check("drk_is_dense_f8", precision == Precision::float8_e4m3fn ? "DRK_F8E4M3" : "DRK_F8E5M2") + R"(
[[maybe_unused]] bool drk_is_scale(const drk_tensor& tensor) {
  return drk_is_dense_f32(tensor) && drk_element_count(tensor) == 1;
}
)";
}

std::string cpu_float8_value(Precision precision) {
  const bool e4m3 = precision == Precision::float8_e4m3fn;
  return substitute(R"(
// The value of a finite @FORMAT@ byte: sign, @EXPONENT@ exponent bits (bias @BIAS@), @MANTISSA@ mantissa bits.
[[maybe_unused]] inline float drk_fp8_value(unsigned byte) {
  constexpr int kMantissaBits = @MANTISSA@;
  constexpr int kBias = @BIAS@;
  const int exponent = static_cast<int>((byte & 0x7Fu) >> kMantissaBits);
  const int mantissa = static_cast<int>(byte & ((1u << kMantissaBits) - 1u));
  const float magnitude =
      exponent == 0 ? __builtin_ldexpf(static_cast<float>(mantissa), 1 - kBias - kMantissaBits)
                    : __builtin_ldexpf(static_cast<float>((1 << kMantissaBits) + mantissa), exponent - kBias - kMantissaBits);
  return (byte & 0x80u) != 0 ? -magnitude : magnitude;
}
)",
                    {{"FORMAT", e4m3 ? "e4m3fn" : "e5m2"},
                     {"EXPONENT", e4m3 ? "4" : "5"},
                     {"BIAS", e4m3 ? "7" : "15"},
                     {"MANTISSA", e4m3 ? "3" : "2"}});
}

std::string dense_check(const std::string& function, const std::string& dtype_constant) {
  return R"(
// Row-major and dense: every dimension of extent > 1 has the packed stride.
[[maybe_unused]] bool )" + function + R"((const drk_tensor& tensor) {
  if (tensor.dtype != )" + dtype_constant + R"( || tensor.ndim < 0 || tensor.ndim > DRK_MAX_DIMS) return false;
  int64_t expected = 1;
  for (int dim = tensor.ndim - 1; dim >= 0; --dim) {
    if (tensor.shape[dim] < 0) return false;
    if (tensor.shape[dim] != 1 && tensor.strides[dim] != expected) return false;
    expected *= tensor.shape[dim];
  }
  return expected == 0 || tensor.data != nullptr;
}
)";
}

std::string every_tensor_dense(const std::string& dense_check) {
  return R"(
  for (int32_t index = 0; index < num_inputs; ++index) {
    if (!)" + dense_check + R"((inputs[index])) return DRK_E_BAD_ARGUMENT;
  }
  if (!)" + dense_check + R"((outputs[0])) return DRK_E_BAD_ARGUMENT;
)";
}

std::string descriptor_helpers() {
  return dense_check("drk_is_dense_f32", "DRK_F32") + R"(

[[maybe_unused]] int64_t drk_element_count(const drk_tensor& tensor) {
  int64_t count = 1;
  for (int dim = 0; dim < tensor.ndim; ++dim) count *= tensor.shape[dim];
  return count;
}

[[maybe_unused]] bool drk_same_shape(const drk_tensor& left, const drk_tensor& right) {
  if (left.ndim != right.ndim) return false;
  for (int dim = 0; dim < left.ndim; ++dim) {
    if (left.shape[dim] != right.shape[dim]) return false;
  }
  return true;
}
)";
}

std::string kernel_preamble(const Problem& problem, const Choice& choice) {
  std::string source = source_heading(problem, choice);
  source += R"(#include "drk_kernel.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <thread>

namespace {
)";
  source += descriptor_helpers();
  source += R"(
// The schedule's thread count, capped by the harness's budget and by the work items.
int drk_thread_count(const drk_context* ctx, int wanted, int64_t work_items) {
  int threads = wanted;
  if (ctx != nullptr && ctx->max_threads > 0 && ctx->max_threads < threads) threads = ctx->max_threads;
  if (work_items < threads) threads = static_cast<int>(work_items);
  if (threads > 8) threads = 8;
  return threads < 1 ? 1 : threads;
}

// Runs body(worker, workers) for every worker, worker 0 on the caller; all are joined before
// returning. A thread that cannot start has its share run on the caller.
template <typename Body>
void drk_parallel(int workers, const Body& body) {
  std::thread pool[8];
  bool started[8] = {};
  for (int worker = 1; worker < workers; ++worker) {
    try {
      pool[worker] = std::thread([&body, worker, workers] { body(worker, workers); });
      started[worker] = true;
    } catch (...) {
      started[worker] = false;
    }
  }
  body(0, workers);
  for (int worker = 1; worker < workers; ++worker) {
    if (started[worker]) {
      pool[worker].join();
    } else {
      body(worker, workers);
    }
  }
}

// The contiguous share [begin, end) of `items` that `worker` of `workers` owns.
void drk_share(int64_t items, int worker, int workers, int64_t* begin, int64_t* end) {
  *begin = items * worker / workers;
  *end = items * (worker + 1) / workers;
}

}  // namespace
)";
  return source;
}

std::string stage_function(const std::string& name, const std::vector<std::string>& stages,
                           const std::string& extra_parameters) {
  std::string source = "static inline float " + name + "(float v" + extra_parameters + ") {\n";
  for (const auto& stage : stages) source += "  v = (" + stage + ");\n";
  source += "  return v;\n}\n";
  return source;
}

std::string entry_point_opening(int num_inputs) {
  return substitute(R"(
DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (inputs == nullptr || outputs == nullptr || num_inputs != @INPUTS@ || num_outputs != 1) {
    return DRK_E_BAD_ARGUMENT;
  }
)",
                    {{"INPUTS", std::to_string(num_inputs)}});
}

std::string substitute(std::string text,
                       std::initializer_list<std::pair<std::string_view, std::string>> values) {
  for (const auto& [key, value] : values) {
    const std::string marker = "@" + std::string(key) + "@";
    for (size_t at = text.find(marker); at != std::string::npos;
         at = text.find(marker, at + value.size())) {
      text.replace(at, marker.size(), value);
    }
  }
  return text;
}

}  // namespace detail

Result<std::string> render(const Problem& problem, const Choice& choice) {
  if (choice.family != problem.family) {
    return make_error(Errc::invalid_argument,
                      "a " + std::string(family_name(choice.family)) +
                          " schedule cannot render task '" + problem.task + "' of family " +
                          std::string(family_name(problem.family)));
  }
  if (choice.device != problem.device) {
    return make_error(Errc::invalid_argument,
                      "a " + std::string(device_name(choice.device)) + " schedule cannot render task '" +
                          problem.task + "', which is evaluated on " + std::string(device_name(problem.device)));
  }
  if (!renders_precision(choice.family, choice.device, problem.precision)) {
    return make_error(Errc::invalid_argument, "task '" + problem.task + "' is " +
                                                  std::string(precision_name(problem.precision)) +
                                                  ": the embedded policy renders " + rendered_precisions());
  }
  if (auto status = validate(choice, problem.precision); !status) {
    return make_error(status.error().code, "task '" + problem.task + "': " + status.error().message);
  }
  if (choice.device == Device::cuda) {
    switch (choice.family) {
      case Family::elementwise: return detail::render_cuda_elementwise(problem, choice);
      case Family::rowwise: return detail::render_cuda_rowwise(problem, choice);
      case Family::gemm: return detail::render_cuda_gemm(problem, choice);
      case Family::reduction: return detail::render_cuda_reduction(problem, choice);
      case Family::batched_gemm: return detail::render_cuda_batched_gemm(problem, choice);
      case Family::conv2d: return detail::render_cuda_conv2d(problem, choice);
      case Family::cross_entropy: return detail::render_cuda_cross_entropy(problem, choice);
      case Family::attention: return detail::render_cuda_attention(problem, choice);
    }
    return make_error(Errc::internal, "unknown family");
  }
  switch (choice.family) {
    case Family::elementwise: return detail::render_elementwise(problem, choice);
    case Family::rowwise: return detail::render_rowwise(problem, choice);
    case Family::gemm: return detail::render_gemm(problem, choice);
    case Family::reduction: return detail::render_reduction(problem, choice);
    case Family::batched_gemm: return detail::render_batched_gemm(problem, choice);
    case Family::conv2d: return detail::render_conv2d(problem, choice);
    case Family::cross_entropy: return detail::render_cross_entropy(problem, choice);
    case Family::attention: return detail::render_attention(problem, choice);
  }
  return make_error(Errc::internal, "unknown family");
}

}  // namespace drk::schedule
