// 2D convolution kernels: y = epilogue(conv2d(x, weight) + bias), NCHW, x [N,C,H,W], weight
// [CO,C,KH,KW], stride 1, no padding, no dilation, y [N,CO,H-KH+1,W-KW+1]. Epilogue stages may
// read extra inputs (after x, weight and bias) indexed by the output channel c, e.g.
// "v + add_bias[c]". `algorithm`: direct accumulates each output row from the input rows under
// the kernel; im2col unfolds one image into a workspace [C*KH*KW, OH*OW] and multiplies weight
// by it with our own loop; im2col_library unfolds and calls ctx->lib->gemm_f32. `channel_tile`
// output channels are updated together from each input value read, `vector_width` output
// positions at a time along the row. `epilogue`: fused applies bias and stages to a block while
// it is still in cache (with the library: one pass after the product); separate runs them as
// passes of their own over the whole output.
#include "kernels/schedule/render_parts.h"
#include "kernels/schedule/stages.h"

namespace drk::schedule::detail {
namespace {

// The shared pieces: the problem's view, the epilogue, the passes over (image, channel) planes
// and the channel-tile update that both own algorithms use.
std::string conv_functions() {
  return R"(
struct drk_conv {
  const float* x;
  const float* weight;
  const float* bias;
  const float* extra[@EXTRA_SLOTS@];
  float* y;
  int64_t batches, C, H, W, CO, KH, KW, OH, OW;
};

inline float drk_finish(const drk_conv& conv, float v, int64_t c) {
  if (@BIAS@) v += conv.bias[c];
  return drk_epilogue(v, c@EXTRA_ARGS@);
}

// Planes p in [begin, end): the OH x OW output of image p / CO, channel p % CO.
void drk_finish_planes(const drk_conv& conv, int64_t begin, int64_t end) {
  const int64_t plane = conv.OH * conv.OW;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c = p % conv.CO;
    float* out = conv.y + p * plane;
    for (int64_t i = 0; i < plane; ++i) out[i] = drk_finish(conv, out[i], c);
  }
}

void drk_bias_planes(const drk_conv& conv, int64_t begin, int64_t end) {
  const int64_t plane = conv.OH * conv.OW;
  for (int64_t p = begin; p < end; ++p) {
    const float add = conv.bias[p % conv.CO];
    float* out = conv.y + p * plane;
#pragma GCC ivdep
    for (int64_t i = 0; i < plane; ++i) out[i] += add;
  }
}

void drk_epilogue_planes(const drk_conv& conv, int64_t begin, int64_t end) {
  const int64_t plane = conv.OH * conv.OW;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c = p % conv.CO;
    float* out = conv.y + p * plane;
    for (int64_t i = 0; i < plane; ++i) out[i] = drk_epilogue(out[i], c@EXTRA_ARGS@);
  }
}

// rows[t][i] += w[t] * src[i] for t < count, i < length: one read of src serves every channel.
inline void drk_channel_update(float* const* rows, const float* w, int count, const float* __restrict src,
                               int64_t length) {
  constexpr int kLanes = @W@;
  int64_t i = 0;
  for (; i + kLanes <= length; i += kLanes) {
    float lanes[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) lanes[lane] = src[i + lane];
    for (int t = 0; t < count; ++t) {
      float* __restrict row = rows[t] + i;
      for (int lane = 0; lane < kLanes; ++lane) row[lane] += w[t] * lanes[lane];
    }
  }
  for (; i < length; ++i) {
    for (int t = 0; t < count; ++t) rows[t][i] += w[t] * src[i];
  }
}

// Zeroes rows[t][0, length) for t < count.
inline void drk_clear_rows(float* const* rows, int count, int64_t length) {
  for (int t = 0; t < count; ++t) {
    for (int64_t i = 0; i < length; ++i) rows[t][i] = 0.0f;
  }
}

// Bias and stages on rows[t][0, length) of channels c0 + t, when the epilogue is fused.
inline void drk_finish_rows(const drk_conv& conv, float* const* rows, int count, int64_t c0, int64_t length) {
  if (!@FUSED@) return;
  for (int t = 0; t < count; ++t) {
    for (int64_t i = 0; i < length; ++i) rows[t][i] = drk_finish(conv, rows[t][i], c0 + t);
  }
}
)";
}

std::string direct_function() {
  return R"(
// Output row oh of channels [c0, c0 + kChannelTile) of image n.
void drk_direct_item(const drk_conv& conv, int64_t n, int64_t c0, int64_t oh) {
  const int count = static_cast<int>(conv.CO - c0 < kChannelTile ? conv.CO - c0 : kChannelTile);
  float* rows[kChannelTile];
  for (int t = 0; t < count; ++t) rows[t] = conv.y + ((n * conv.CO + c0 + t) * conv.OH + oh) * conv.OW;
  drk_clear_rows(rows, count, conv.OW);
  float w[kChannelTile];
  for (int64_t ci = 0; ci < conv.C; ++ci) {
    for (int64_t kh = 0; kh < conv.KH; ++kh) {
      const float* x_row = conv.x + ((n * conv.C + ci) * conv.H + oh + kh) * conv.W;
      for (int64_t kw = 0; kw < conv.KW; ++kw) {
        for (int t = 0; t < count; ++t) w[t] = conv.weight[(((c0 + t) * conv.C + ci) * conv.KH + kh) * conv.KW + kw];
        drk_channel_update(rows, w, count, x_row + kw, conv.OW);
      }
    }
  }
  drk_finish_rows(conv, rows, count, c0, conv.OW);
}
)";
}

std::string im2col_functions(bool own_product) {
  std::string source = R"(
// Rows [begin, end) of image n's unfolded input: row (ci, kh, kw), column oh * OW + ow.
void drk_unfold_rows(const drk_conv& conv, int64_t n, float* __restrict columns, int64_t begin, int64_t end) {
  const int64_t positions = conv.OH * conv.OW;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t kw = r % conv.KW;
    const int64_t kh = (r / conv.KW) % conv.KH;
    const int64_t ci = r / (conv.KW * conv.KH);
    float* out = columns + r * positions;
    for (int64_t oh = 0; oh < conv.OH; ++oh) {
      const float* src = conv.x + ((n * conv.C + ci) * conv.H + oh + kh) * conv.W + kw;
      for (int64_t ow = 0; ow < conv.OW; ++ow) out[oh * conv.OW + ow] = src[ow];
    }
  }
}
)";
  if (own_product) {
    source += R"(
// Channels [c0, c0 + kChannelTile), columns [p0, p1) of image n: weight [CO, C*KH*KW] times columns.
void drk_im2col_item(const drk_conv& conv, int64_t n, const float* __restrict columns, int64_t c0, int64_t p0,
                     int64_t p1) {
  const int count = static_cast<int>(conv.CO - c0 < kChannelTile ? conv.CO - c0 : kChannelTile);
  const int64_t positions = conv.OH * conv.OW;
  const int64_t depth = conv.C * conv.KH * conv.KW;
  float* rows[kChannelTile];
  for (int t = 0; t < count; ++t) rows[t] = conv.y + (n * conv.CO + c0 + t) * positions + p0;
  drk_clear_rows(rows, count, p1 - p0);
  float w[kChannelTile];
  for (int64_t r = 0; r < depth; ++r) {
    for (int t = 0; t < count; ++t) w[t] = conv.weight[(c0 + t) * depth + r];
    drk_channel_update(rows, w, count, columns + r * positions + p0, p1 - p0);
  }
  drk_finish_rows(conv, rows, count, c0, p1 - p0);
}
)";
  }
  return source;
}

// One parallel pass over `items` items: `body` uses `item`.
std::string parallel_items(const std::string& items, const std::string& body) {
  return substitute(R"(
  {
    const int64_t items = @ITEMS@;
    const int workers = drk_thread_count(ctx, kThreads, items);
    drk_parallel(workers, [&](int worker, int worker_count) {
      int64_t begin = 0, end = 0;
      drk_share(items, worker, worker_count, &begin, &end);
@BODY@    });
  }
)",
                    {{"ITEMS", items}, {"BODY", body}});
}

}  // namespace

Result<std::string> render_conv2d(const Problem& problem, const Choice& choice) {
  auto params = gemm_params(problem);  // bias and epilogue, as the gemm family spells them
  if (!params) return params.error();
  const bool has_bias = params->has_bias;
  const size_t fixed_inputs = has_bias ? 3 : 2;
  auto channel_inputs = channel_input_names(problem, fixed_inputs);
  if (!channel_inputs) return channel_inputs.error();
  const std::vector<std::string>& extras = *channel_inputs;
  std::string extra_parameters = ", int64_t c";
  std::string extra_args;
  for (size_t index = 0; index < extras.size(); ++index) {
    extra_parameters += ", const float* __restrict " + extras[index];
    extra_args += ", conv.extra[" + std::to_string(index) + "]";
  }
  const std::string algorithm = choice.value(conv2d_knob::algorithm);
  const bool fused = choice.value(conv2d_knob::epilogue) == "fused";
  const bool has_finish = has_bias || !params->epilogue.empty();

  std::string source = kernel_preamble(problem, choice);
  source += substitute(R"(
namespace {

constexpr int kChannelTile = @CHANNEL_TILE@;
constexpr int kThreads = @THREADS@;
constexpr int64_t kColumnBlock = 256;

)",
                       {{"CHANNEL_TILE", choice.value(conv2d_knob::channel_tile)},
                        {"THREADS", choice.value(conv2d_knob::threads)}});
  source += stage_function("drk_epilogue", params->epilogue, extra_parameters);
  const bool own_fused = fused && algorithm != "im2col_library";
  source += substitute(conv_functions(), {{"EXTRA_SLOTS", std::to_string(extras.size() + 1)},
                                          {"BIAS", has_bias ? "true" : "false"},
                                          {"EXTRA_ARGS", extra_args},
                                          {"FUSED", own_fused && has_finish ? "true" : "false"},
                                          {"W", choice.value(conv2d_knob::vector_width)}});
  source += algorithm == "direct" ? direct_function() : im2col_functions(algorithm == "im2col");
  source += "\n}  // namespace\n";
  source += entry_point_opening(static_cast<int>(fixed_inputs + extras.size()));
  source += substitute(every_tensor_dense() + R"(  const drk_tensor& x = inputs[0];
  const drk_tensor& weight = inputs[1];
  drk_tensor& y = outputs[0];
  if (x.ndim != 4 || weight.ndim != 4 || y.ndim != 4) return DRK_E_UNSUPPORTED_SHAPE;
  drk_conv conv{};
  conv.batches = x.shape[0];
  conv.C = x.shape[1];
  conv.H = x.shape[2];
  conv.W = x.shape[3];
  conv.CO = weight.shape[0];
  conv.KH = weight.shape[2];
  conv.KW = weight.shape[3];
  if (weight.shape[1] != conv.C || conv.KH < 1 || conv.KW < 1 || conv.KH > conv.H || conv.KW > conv.W) {
    return DRK_E_UNSUPPORTED_SHAPE;
  }
  conv.OH = conv.H - conv.KH + 1;
  conv.OW = conv.W - conv.KW + 1;
  if (y.shape[0] != conv.batches || y.shape[1] != conv.CO || y.shape[2] != conv.OH || y.shape[3] != conv.OW) {
    return DRK_E_UNSUPPORTED_SHAPE;
  }
  for (int32_t index = 2; index < num_inputs; ++index) {
    if (drk_element_count(inputs[index]) != conv.CO) return DRK_E_UNSUPPORTED_SHAPE;
  }
  conv.x = static_cast<const float*>(x.data);
  conv.weight = static_cast<const float*>(weight.data);
  conv.bias = @BIAS@ ? static_cast<const float*>(inputs[2].data) : nullptr;
  for (int32_t index = @FIXED@; index < num_inputs; ++index) {
    conv.extra[index - @FIXED@] = static_cast<const float*>(inputs[index].data);
  }
  conv.y = static_cast<float*>(y.data);
  const int64_t planes = conv.batches * conv.CO;
  const int64_t positions = conv.OH * conv.OW;
  if (planes * positions == 0) return DRK_OK;
  const int64_t channel_tiles = (conv.CO + kChannelTile - 1) / kChannelTile;
  (void)channel_tiles;
)",
                       {{"BIAS", has_bias ? "true" : "false"}, {"FIXED", std::to_string(fixed_inputs)}});
  if (algorithm == "direct") {
    source += parallel_items("conv.batches * channel_tiles * conv.OH", R"(      for (int64_t item = begin; item < end; ++item) {
        const int64_t oh = item % conv.OH;
        const int64_t tile = (item / conv.OH) % channel_tiles;
        const int64_t n = item / (conv.OH * channel_tiles);
        drk_direct_item(conv, n, tile * kChannelTile, oh);
      }
)");
  } else {
    source += R"(  const int64_t depth = conv.C * conv.KH * conv.KW;
  float* columns = nullptr;
  if (ctx != nullptr && ctx->workspace != nullptr) {
    columns = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(depth * positions) * sizeof(float)));
  }
  if (columns == nullptr) return DRK_E_WORKSPACE;
  const int64_t column_blocks = (positions + kColumnBlock - 1) / kColumnBlock;
  (void)column_blocks;
  for (int64_t n = 0; n < conv.batches; ++n) {)";
    source += parallel_items("depth", "      drk_unfold_rows(conv, n, columns, begin, end);\n");
    if (algorithm == "im2col") {
      source += parallel_items("channel_tiles * column_blocks", R"(      for (int64_t item = begin; item < end; ++item) {
        const int64_t p0 = (item % column_blocks) * kColumnBlock;
        const int64_t p1 = p0 + kColumnBlock < positions ? p0 + kColumnBlock : positions;
        drk_im2col_item(conv, n, columns, (item / column_blocks) * kChannelTile, p0, p1);
      }
)");
    } else {
      source += R"(    if (ctx->lib == nullptr || ctx->lib->gemm_f32 == nullptr) return DRK_E_LIBRARY;
    if (ctx->lib->gemm_f32(ctx, conv.CO, positions, depth, 1.0f, conv.weight, depth, columns, positions, 0, 0.0f,
                           conv.y + n * conv.CO * positions, positions) != 0) {
      return DRK_E_LIBRARY;
    }
)";
    }
    source += "  }\n";
  }
  if (has_finish && !own_fused) {
    if (fused) {
      source += parallel_items("planes", "      drk_finish_planes(conv, begin, end);\n");
    } else {
      if (has_bias) source += parallel_items("planes", "      drk_bias_planes(conv, begin, end);\n");
      if (!params->epilogue.empty()) {
        source += parallel_items("planes", "      drk_epilogue_planes(conv, begin, end);\n");
      }
    }
  }
  source += "  return DRK_OK;\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
