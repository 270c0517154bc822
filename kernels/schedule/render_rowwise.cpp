// Rowwise kernels: softmax, log_softmax, rms_norm, layer_norm over an inclusive range of dims.
// The tensor is viewed as [outer, reduce, inner]. When inner == 1 a row is contiguous and is
// reduced with `vector_width` independent partial accumulators; otherwise a tile of
// `inner_tile` neighbouring inner positions is reduced together, its lanes contiguous in memory.
// `passes`: three_pass reads the row once per statistic; two_pass computes the statistics in
// one read (online max+sum for the softmax family, Welford for layer_norm), then writes.
// rms_norm needs one statistic, so both options read the row twice.
// float16 and bfloat16 tasks: each work item's row (or tile) is widened into a float32 scratch of
// its worker (ctx->workspace), the float32 kernel runs on it, and each output is rounded once
// into the 16-bit tensor; layer_norm's 16-bit weight and bias are widened once per call.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

struct Op {
  std::string name;  // softmax | log_softmax | rms_norm | layer_norm
  bool two_pass = false;
};

// Reduction of a contiguous row of n elements: in[0..n) -> out[0..n).
std::string row_function(const Op& op) {
  const std::string head = R"(
void drk_row(const float* __restrict in, float* __restrict out, int64_t n,
             const float* __restrict weight, const float* __restrict bias) {
  (void)weight;
  (void)bias;
  constexpr int kLanes = @W@;
  int64_t i = 0;
)";
  std::string body;
  if (op.name == "softmax" || op.name == "log_softmax") {
    const bool log = op.name == "log_softmax";
    if (op.two_pass) {
      body = R"(  float lane_max[kLanes];
  float lane_sum[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    lane_max[lane] = -INFINITY;
    lane_sum[lane] = 0.0f;
  }
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float v = in[i + lane];
      if (v > lane_max[lane]) {
        lane_sum[lane] = lane_sum[lane] * expf(lane_max[lane] - v) + 1.0f;
        lane_max[lane] = v;
      } else {
        lane_sum[lane] += expf(v - lane_max[lane]);
      }
    }
  }
  for (; i < n; ++i) {
    const float v = in[i];
    if (v > lane_max[0]) {
      lane_sum[0] = lane_sum[0] * expf(lane_max[0] - v) + 1.0f;
      lane_max[0] = v;
    } else {
      lane_sum[0] += expf(v - lane_max[0]);
    }
  }
  float row_max = lane_max[0];
  for (int lane = 1; lane < kLanes; ++lane) row_max = lane_max[lane] > row_max ? lane_max[lane] : row_max;
  float row_sum = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (lane_sum[lane] > 0.0f) row_sum += lane_sum[lane] * expf(lane_max[lane] - row_max);
  }
)";
      body += log ? R"(  const float shift = row_max + logf(row_sum);
  for (int64_t j = 0; j < n; ++j) out[j] = in[j] - shift;
}
)"
                  : R"(  for (int64_t j = 0; j < n; ++j) out[j] = expf(in[j] - row_max) / row_sum;
}
)";
    } else {
      body = R"(  float lane_max[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) lane_max[lane] = -INFINITY;
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      lane_max[lane] = in[i + lane] > lane_max[lane] ? in[i + lane] : lane_max[lane];
    }
  }
  for (; i < n; ++i) lane_max[0] = in[i] > lane_max[0] ? in[i] : lane_max[0];
  float row_max = lane_max[0];
  for (int lane = 1; lane < kLanes; ++lane) row_max = lane_max[lane] > row_max ? lane_max[lane] : row_max;
  float lane_sum[kLanes] = {};
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float e = expf(in[i + lane] - row_max);
      @STORE_LANE@
      lane_sum[lane] += e;
    }
  }
  for (; i < n; ++i) {
    const float e = expf(in[i] - row_max);
    @STORE_TAIL@
    lane_sum[0] += e;
  }
  float row_sum = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) row_sum += lane_sum[lane];
)";
      body = substitute(body, {{"STORE_LANE", log ? "" : "out[i + lane] = e;"},
                               {"STORE_TAIL", log ? "" : "out[i] = e;"}});
      body += log ? R"(  const float shift = row_max + logf(row_sum);
  for (int64_t j = 0; j < n; ++j) out[j] = in[j] - shift;
}
)"
                  : R"(  for (int64_t j = 0; j < n; ++j) out[j] = out[j] / row_sum;
}
)";
    }
  } else if (op.name == "rms_norm") {
    body = R"(  float lane_squares[kLanes] = {};
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) lane_squares[lane] += in[i + lane] * in[i + lane];
  }
  for (; i < n; ++i) lane_squares[0] += in[i] * in[i];
  float squares = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) squares += lane_squares[lane];
  const float denominator = sqrtf(squares / static_cast<float>(n) + kEps);
  for (int64_t j = 0; j < n; ++j) out[j] = in[j] / denominator;
}
)";
  } else if (op.two_pass) {  // layer_norm, Welford per lane, lanes merged with Chan's formula
    body = R"(  float lane_count[kLanes] = {};
  float lane_mean[kLanes] = {};
  float lane_m2[kLanes] = {};
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float v = in[i + lane];
      lane_count[lane] += 1.0f;
      const float delta = v - lane_mean[lane];
      lane_mean[lane] += delta / lane_count[lane];
      lane_m2[lane] += delta * (v - lane_mean[lane]);
    }
  }
  for (; i < n; ++i) {
    const float v = in[i];
    lane_count[0] += 1.0f;
    const float delta = v - lane_mean[0];
    lane_mean[0] += delta / lane_count[0];
    lane_m2[0] += delta * (v - lane_mean[0]);
  }
  float count = 0.0f, mean = 0.0f, m2 = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (lane_count[lane] == 0.0f) continue;
    const float merged = count + lane_count[lane];
    const float delta = lane_mean[lane] - mean;
    mean += delta * lane_count[lane] / merged;
    m2 += lane_m2[lane] + delta * delta * count * lane_count[lane] / merged;
    count = merged;
  }
  const float rstd = 1.0f / sqrtf(m2 / static_cast<float>(n) + kEps);
  for (int64_t j = 0; j < n; ++j) out[j] = (in[j] - mean) * rstd * weight[j] + bias[j];
}
)";
  } else {  // layer_norm, three passes: mean, variance, write
    body = R"(  float lane_sum[kLanes] = {};
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) lane_sum[lane] += in[i + lane];
  }
  for (; i < n; ++i) lane_sum[0] += in[i];
  float sum = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) sum += lane_sum[lane];
  const float mean = sum / static_cast<float>(n);
  float lane_squares[kLanes] = {};
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float d = in[i + lane] - mean;
      lane_squares[lane] += d * d;
    }
  }
  for (; i < n; ++i) lane_squares[0] += (in[i] - mean) * (in[i] - mean);
  float squares = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) squares += lane_squares[lane];
  const float rstd = 1.0f / sqrtf(squares / static_cast<float>(n) + kEps);
  for (int64_t j = 0; j < n; ++j) out[j] = (in[j] - mean) * rstd * weight[j] + bias[j];
}
)";
  }
  return head + body;
}

// Reduction of `lanes` (<= kTile) neighbouring inner positions over `n` reduce steps of stride
// `stride`: lane j of step r is in[r * stride + j].
std::string tile_function(const Op& op) {
  std::string source = R"(
void drk_tile(const float* __restrict in, float* __restrict out, int64_t n, int64_t stride,
              int64_t lanes, const float* __restrict weight, const float* __restrict bias) {
  (void)weight;
  (void)bias;
  float first[kTile];
  float second[kTile];
)";
  if (op.name == "softmax" || op.name == "log_softmax") {
    const bool log = op.name == "log_softmax";
    if (op.two_pass) {
      source += R"(  for (int64_t j = 0; j < lanes; ++j) {
    first[j] = -INFINITY;
    second[j] = 0.0f;
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    for (int64_t j = 0; j < lanes; ++j) {
      const float v = row[j];
      if (v > first[j]) {
        second[j] = second[j] * expf(first[j] - v) + 1.0f;
        first[j] = v;
      } else {
        second[j] += expf(v - first[j]);
      }
    }
  }
)";
    } else {
      source += R"(  for (int64_t j = 0; j < lanes; ++j) {
    first[j] = -INFINITY;
    second[j] = 0.0f;
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
#pragma GCC ivdep
    for (int64_t j = 0; j < lanes; ++j) first[j] = row[j] > first[j] ? row[j] : first[j];
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    for (int64_t j = 0; j < lanes; ++j) second[j] += expf(row[j] - first[j]);
  }
)";
    }
    source += log ? R"(  for (int64_t j = 0; j < lanes; ++j) first[j] = first[j] + logf(second[j]);
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    float* row_out = out + r * stride;
    for (int64_t j = 0; j < lanes; ++j) row_out[j] = row[j] - first[j];
  }
}
)"
                  : R"(  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    float* row_out = out + r * stride;
    for (int64_t j = 0; j < lanes; ++j) row_out[j] = expf(row[j] - first[j]) / second[j];
  }
}
)";
  } else if (op.name == "rms_norm") {
    source += R"(  for (int64_t j = 0; j < lanes; ++j) first[j] = 0.0f;
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
#pragma GCC ivdep
    for (int64_t j = 0; j < lanes; ++j) first[j] += row[j] * row[j];
  }
  for (int64_t j = 0; j < lanes; ++j) second[j] = sqrtf(first[j] / static_cast<float>(n) + kEps);
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    float* row_out = out + r * stride;
#pragma GCC ivdep
    for (int64_t j = 0; j < lanes; ++j) row_out[j] = row[j] / second[j];
  }
}
)";
  } else {
    if (op.two_pass) {  // Welford: first = mean, second = m2
      source += R"(  for (int64_t j = 0; j < lanes; ++j) {
    first[j] = 0.0f;
    second[j] = 0.0f;
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    const float count = static_cast<float>(r + 1);
    for (int64_t j = 0; j < lanes; ++j) {
      const float delta = row[j] - first[j];
      first[j] += delta / count;
      second[j] += delta * (row[j] - first[j]);
    }
  }
)";
    } else {
      source += R"(  for (int64_t j = 0; j < lanes; ++j) {
    first[j] = 0.0f;
    second[j] = 0.0f;
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
#pragma GCC ivdep
    for (int64_t j = 0; j < lanes; ++j) first[j] += row[j];
  }
  for (int64_t j = 0; j < lanes; ++j) first[j] /= static_cast<float>(n);
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    for (int64_t j = 0; j < lanes; ++j) {
      const float d = row[j] - first[j];
      second[j] += d * d;
    }
  }
)";
    }
    source += R"(  for (int64_t j = 0; j < lanes; ++j) second[j] = 1.0f / sqrtf(second[j] / static_cast<float>(n) + kEps);
  for (int64_t r = 0; r < n; ++r) {
    const float* row = in + r * stride;
    float* row_out = out + r * stride;
    const float w = weight[r];
    const float b = bias[r];
    for (int64_t j = 0; j < lanes; ++j) row_out[j] = (row[j] - first[j]) * second[j] * w + b;
  }
}
)";
  }
  return source;
}

}  // namespace

std::string rowwise_split_dims(const std::string& dense) {
  return R"(
  const drk_tensor& x = inputs[0];
  drk_tensor& y = outputs[0];
  if (!)" + dense + "(x) || !" + dense + R"((y)) return DRK_E_BAD_ARGUMENT;
  if (!drk_same_shape(x, y)) return DRK_E_UNSUPPORTED_SHAPE;
  const int first_dim = @BEGIN@ < 0 ? @BEGIN@ + x.ndim : @BEGIN@;
  const int last_dim = @END@ < 0 ? @END@ + x.ndim : @END@;
  if (first_dim < 0 || last_dim >= x.ndim || first_dim > last_dim) return DRK_E_UNSUPPORTED_SHAPE;
  int64_t outer = 1, reduce = 1, inner = 1;
  for (int dim = 0; dim < x.ndim; ++dim) {
    if (dim < first_dim) {
      outer *= x.shape[dim];
    } else if (dim <= last_dim) {
      reduce *= x.shape[dim];
    } else {
      inner *= x.shape[dim];
    }
  }
)";
}

Result<std::string> render_rowwise(const Problem& problem, const Choice& choice) {
  auto params = rowwise_params(problem);
  if (!params) return params.error();
  const Op op{params->op, choice.value(rowwise_knob::passes) == "two_pass"};
  const bool affine = op.name == "layer_norm";

  std::string source = kernel_preamble(problem, choice);
  source += substitute(R"(
namespace {

constexpr float kEps = static_cast<float>(@EPS@);
constexpr int64_t kTile = @TILE@;
)",
                       {{"EPS", params->eps}, {"TILE", choice.value(rowwise_knob::inner_tile)}});
  source += substitute(row_function(op), {{"W", choice.value(rowwise_knob::vector_width)}});
  source += tile_function(op);
  const bool sixteen_bit = problem.precision != Precision::float32;
  if (sixteen_bit) source += cpu_element_access(problem.precision);
  source += "\n}  // namespace\n";
  source += entry_point_opening(affine ? 3 : 1);
  const std::string dense = sixteen_bit ? "drk_is_dense_16" : "drk_is_dense_f32";
  source += substitute(rowwise_split_dims(dense) + R"(  if (@AFFINE@) {
    if (!@DENSE@(inputs[1]) || !@DENSE@(inputs[2])) return DRK_E_BAD_ARGUMENT;
    if (drk_element_count(inputs[1]) != reduce || drk_element_count(inputs[2]) != reduce) {
      return DRK_E_UNSUPPORTED_SHAPE;
    }
  }
  if (outer * reduce * inner == 0) return DRK_OK;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t items = inner == 1 ? outer : outer * tiles;
  const int workers = drk_thread_count(ctx, @THREADS@, items);
)",
                       {{"AFFINE", affine ? "true" : "false"},
                        {"DENSE", dense},
                        {"BEGIN", std::to_string(params->reduce_begin)},
                        {"END", std::to_string(params->reduce_end)},
                        {"THREADS", choice.value(rowwise_knob::threads)}});
  // One loop over the work items: a row (inner == 1) at `offset`, or a tile of `lanes` columns
  // there. float32 runs the kernel in place; 16-bit widens the item into the worker's scratch,
  // runs it there and rounds each output into y.
  const std::string loop = R"(  drk_parallel(workers, [&](int worker, int worker_count) {
@WORKER@    int64_t begin = 0, end = 0;
    drk_share(items, worker, worker_count, &begin, &end);
    for (int64_t item = begin; item < end; ++item) {
      if (inner == 1) {
        const int64_t offset = item * reduce;
@ROW@
      } else {
        const int64_t o = item / tiles;
        const int64_t first_lane = (item % tiles) * kTile;
        const int64_t lanes = inner - first_lane < kTile ? inner - first_lane : kTile;
        const int64_t offset = o * reduce * inner + first_lane;
@TILE@
      }
    }
  });
  return DRK_OK;
}
)";
  if (!sixteen_bit) {
    source += substitute(R"(  const float* weight = @AFFINE@ ? static_cast<const float*>(inputs[1].data) : nullptr;
  const float* bias = @AFFINE@ ? static_cast<const float*>(inputs[2].data) : nullptr;
  const float* src = static_cast<const float*>(x.data);
  float* dst = static_cast<float*>(y.data);
)" + loop,
                         {{"AFFINE", affine ? "true" : "false"},
                          {"WORKER", ""},
                          {"ROW", "        drk_row(src + offset, dst + offset, reduce, weight, bias);"},
                          {"TILE", "        drk_tile(src + offset, dst + offset, reduce, inner, lanes, weight, bias);"}});
    return source;
  }
  source += substitute(R"(  const uint16_t* src = static_cast<const uint16_t*>(x.data);
  uint16_t* dst = static_cast<uint16_t*>(y.data);
  // Each worker's scratch: a row or tile widened, and its float32 result; then weight and bias.
  const int64_t span = reduce * (inner == 1 ? 1 : (inner < kTile ? inner : kTile));
  const int64_t affine_floats = @AFFINE@ ? 2 * reduce : 0;
  if (ctx == nullptr || ctx->workspace == nullptr) return DRK_E_WORKSPACE;
  float* scratch = static_cast<float*>(
      ctx->workspace(ctx, sizeof(float) * static_cast<size_t>(2 * span * workers + affine_floats)));
  if (scratch == nullptr) return DRK_E_WORKSPACE;
  float* weight = nullptr;
  float* bias = nullptr;
  if (@AFFINE@) {
    weight = scratch + 2 * span * workers;
    bias = weight + reduce;
    const uint16_t* weight_16 = static_cast<const uint16_t*>(inputs[1].data);
    const uint16_t* bias_16 = static_cast<const uint16_t*>(inputs[2].data);
    for (int64_t j = 0; j < reduce; ++j) {
      weight[j] = drk_get(weight_16[j]);
      bias[j] = drk_get(bias_16[j]);
    }
  }
)" + loop,
                       {{"AFFINE", affine ? "true" : "false"},
                        {"WORKER", R"(    float* widened = scratch + 2 * span * worker;
    float* result = widened + span;
)"},
                        {"ROW", R"(        for (int64_t j = 0; j < reduce; ++j) widened[j] = drk_get(src[offset + j]);
        drk_row(widened, result, reduce, weight, bias);
        for (int64_t j = 0; j < reduce; ++j) drk_put(dst + offset + j, result[j]);)"},
                        {"TILE", R"(        for (int64_t r = 0; r < reduce; ++r)
          for (int64_t l = 0; l < lanes; ++l) widened[r * lanes + l] = drk_get(src[offset + r * inner + l]);
        drk_tile(widened, result, reduce, lanes, lanes, weight, bias);
        for (int64_t r = 0; r < reduce; ++r)
          for (int64_t l = 0; l < lanes; ++l) drk_put(dst + offset + r * inner + l, result[r * lanes + l]);)"}});
  return source;
}

}  // namespace drk::schedule::detail
