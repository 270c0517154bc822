// Elementwise kernels: y[i] = stages(x[i]), fused in one pass or one pass per stage through a
// workspace buffer (as eager execution does), over chunks fanned out to threads; float32, or
// float16 and bfloat16 computed in float32 (the workspace is float32 in every precision). FP8
// inputs are read through a table of the 256 bytes' values times the scale, made once a call, and
// the output is bfloat16.
#include "kernels/schedule/render_parts.h"
#include "kernels/schedule/stages.h"

namespace drk::schedule::detail {
namespace {

// A map over [begin, end) in groups of `width` lanes the compiler can keep in vector registers.
std::string map_helpers(int width) {
  if (width == 1) {
    return R"(
template <float (*Op)(float), typename In, typename Out>
void drk_map(const In* __restrict src, Out* __restrict dst, int64_t begin, int64_t end) {
  for (int64_t index = begin; index < end; ++index) drk_put(dst + index, Op(drk_get(src[index])));
}

template <float (*Op)(float)>
void drk_map_in_place(float* data, int64_t begin, int64_t end) {
  for (int64_t index = begin; index < end; ++index) data[index] = Op(data[index]);
}
)";
  }
  return substitute(R"(
template <float (*Op)(float), typename In, typename Out>
void drk_map(const In* __restrict src, Out* __restrict dst, int64_t begin, int64_t end) {
  constexpr int kWidth = @W@;
  int64_t index = begin;
  for (; index + kWidth <= end; index += kWidth) {
#pragma GCC ivdep
    for (int lane = 0; lane < kWidth; ++lane) drk_put(dst + index + lane, Op(drk_get(src[index + lane])));
  }
  for (; index < end; ++index) drk_put(dst + index, Op(drk_get(src[index])));
}

template <float (*Op)(float)>
void drk_map_in_place(float* data, int64_t begin, int64_t end) {
  constexpr int kWidth = @W@;
  int64_t index = begin;
  for (; index + kWidth <= end; index += kWidth) {
#pragma GCC ivdep
    for (int lane = 0; lane < kWidth; ++lane) data[index + lane] = Op(data[index + lane]);
  }
  for (; index < end; ++index) data[index] = Op(data[index]);
}
)",
                    {{"W", std::to_string(width)}});
}

// The map of an FP8 input: each byte's value (decoded and scaled) from `table`.
std::string table_map_helper(int width) {
  return substitute(R"(
template <float (*Op)(float), typename Out>
void drk_map_table(const uint8_t* __restrict src, const float* __restrict table, Out* __restrict dst, int64_t begin,
                   int64_t end) {
  constexpr int kWidth = @W@;
  int64_t index = begin;
  for (; index + kWidth <= end; index += kWidth) {
#pragma GCC ivdep
    for (int lane = 0; lane < kWidth; ++lane) drk_put(dst + index + lane, Op(table[src[index + lane]]));
  }
  for (; index < end; ++index) drk_put(dst + index, Op(table[src[index]]));
}
)",
                    {{"W", std::to_string(width)}});
}

// One parallel pass over every chunk: `call` is a map over [begin, end).
std::string pass(const std::string& call) {
  return substitute(R"(
  drk_parallel(workers, [&](int worker, int worker_count) {
    for (int64_t chunk = worker; chunk < chunks; chunk += worker_count) {
      const int64_t begin = chunk * kChunk;
      const int64_t end = begin + kChunk < count ? begin + kChunk : count;
      @CALL@;
    }
  });
)",
                    {{"CALL", call}});
}

}  // namespace

Result<std::vector<std::string>> elementwise_stages(const Problem& problem) {
  auto stages_text = problem.param("stages");
  if (!stages_text) return stages_text.error();
  auto stages = parse_stages(*stages_text);
  if (!stages) {
    return make_error(Errc::parse_error, "task '" + problem.task + "': " + stages.error().message);
  }
  return stages;
}

Result<std::string> render_elementwise(const Problem& problem, const Choice& choice) {
  auto stages = elementwise_stages(problem);
  if (!stages) return stages.error();
  const bool fused = choice.value(elementwise_knob::fusion) == "fused" || stages->size() <= 1;

  std::string source = kernel_preamble(problem, choice);
  source += "\nnamespace {\n\n";
  for (size_t index = 0; index < stages->size(); ++index) {
    source += stage_function("drk_stage_" + std::to_string(index), {(*stages)[index]});
  }
  source += stage_function("drk_all_stages", *stages);
  const bool wide = problem.precision == Precision::float32;
  const bool float8 = is_float8(problem.precision);
  const int width = numeric_value(choice, elementwise_knob::vector_width);
  source += cpu_element_access(float8 ? Precision::bfloat16 : problem.precision);
  source += map_helpers(width);
  if (float8) source += float8_checks(problem.precision) + cpu_float8_value(problem.precision) + table_map_helper(width);
  source += "\n}  // namespace\n";
  source += entry_point_opening(float8 ? 2 : 1);
  source += "\n  const drk_tensor& x = inputs[0];\n";
  if (float8) {
    // The scale times each byte's value, once a call: the passes read the bytes through it.
    source += R"(  const drk_tensor& x_scale = inputs[1];
  if (!drk_is_dense_f8(x) || !drk_is_scale(x_scale)) return DRK_E_BAD_ARGUMENT;
  const float scale = *static_cast<const float*>(x_scale.data);
  float table[256];
  for (unsigned byte = 0; byte < 256; ++byte) table[byte] = drk_fp8_value(byte) * scale;
  const uint8_t* src = static_cast<const uint8_t*>(x.data);
)";
  } else {
    source += substitute("  if (!@DENSE@(x)) return DRK_E_BAD_ARGUMENT;\n  const @ELEMENT@* src = static_cast<const @ELEMENT@*>(x.data);\n",
                         {{"DENSE", wide ? "drk_is_dense_f32" : "drk_is_dense_16"}, {"ELEMENT", wide ? "float" : "uint16_t"}});
  }
  source += substitute(R"(  drk_tensor& y = outputs[0];
  if (!@DENSE@(y)) return DRK_E_BAD_ARGUMENT;
  if (!drk_same_shape(x, y)) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t count = drk_element_count(x);
  if (count == 0) return DRK_OK;
  @ELEMENT@* dst = static_cast<@ELEMENT@*>(y.data);
  constexpr int64_t kChunk = @CHUNK@;
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  const int workers = drk_thread_count(ctx, @THREADS@, chunks);
)",
                       {{"CHUNK", choice.value(elementwise_knob::chunk)},
                        {"THREADS", choice.value(elementwise_knob::threads)},
                        {"DENSE", wide ? "drk_is_dense_f32" : "drk_is_dense_16"},
                        {"ELEMENT", wide ? "float" : "uint16_t"}});
  // The first pass reads the input: through the table for FP8 bytes.
  auto first_map = [&](const std::string& op, const std::string& to) {
    return float8 ? "drk_map_table<" + op + ">(src, table, " + to + ", begin, end)"
                  : "drk_map<" + op + ">(src, " + to + ", begin, end)";
  };

  if (fused) {
    source += pass(first_map("drk_all_stages", "dst"));
  } else {
    source += R"(  float* scratch = nullptr;
  if (ctx != nullptr && ctx->workspace != nullptr) {
    scratch = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(count) * sizeof(float)));
  }
  if (scratch == nullptr) return DRK_E_WORKSPACE;
)";
    const size_t last = stages->size() - 1;
    for (size_t index = 0; index <= last; ++index) {
      const std::string stage = "drk_stage_" + std::to_string(index);
      if (index == 0) {
        source += pass(first_map(stage, "scratch"));
      } else if (index == last) {
        source += pass("drk_map<" + stage + ">(scratch, dst, begin, end)");
      } else {
        source += pass("drk_map_in_place<" + stage + ">(scratch, begin, end)");
      }
    }
  }
  source += "  return DRK_OK;\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
