// Reduction kernels: sum, mean or max of x over one dimension (`dim`, negative counts from the
// end; `keepdim` says whether y keeps it as 1). x is viewed as [outer, reduce, inner] and y as
// [outer, inner]. A work item is one outer index and a tile of `inner_tile` inner positions; the
// threads split the items. `strategy`: per_output walks the reduced dim for one output element
// at a time (a strided walk when inner > 1) with `vector_width` independent partial
// accumulators over the reduced index; accumulate_rows keeps one running accumulator per inner
// position of the tile and adds one contiguous row slice per reduced index, `vector_width`
// lanes at a time. float16 and bfloat16 tasks: each element is widened to float32 as it is read
// (cpu_element_access), the accumulators are float32, and each output is rounded once.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

// Reduces the tile [j0, j1) of outer index o into out[o * inner + j].
std::string per_output_function() {
  return R"(
template <typename In, typename Out>
void drk_reduce_tile(const In* __restrict x, Out* __restrict out, int64_t reduce, int64_t inner,
                     int64_t o, int64_t j0, int64_t j1) {
  constexpr int kLanes = @W@;
  for (int64_t j = j0; j < j1; ++j) {
    const In* column = x + o * reduce * inner + j;
    float lanes[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) lanes[lane] = kIdentity;
    int64_t r = 0;
    for (; r + kLanes <= reduce; r += kLanes) {
      for (int lane = 0; lane < kLanes; ++lane) {
        lanes[lane] = drk_combine(lanes[lane], drk_get(column[(r + lane) * inner]));
      }
    }
    for (; r < reduce; ++r) lanes[0] = drk_combine(lanes[0], drk_get(column[r * inner]));
    float total = lanes[0];
    for (int lane = 1; lane < kLanes; ++lane) total = drk_combine(total, lanes[lane]);
    drk_put(out + o * inner + j, drk_result(total, reduce));
  }
}
)";
}

std::string accumulate_rows_function() {
  return R"(
template <typename In, typename Out>
void drk_reduce_tile(const In* __restrict x, Out* __restrict out, int64_t reduce, int64_t inner,
                     int64_t o, int64_t j0, int64_t j1) {
  constexpr int kLanes = @W@;
  float running[kTile];
  const int64_t width = j1 - j0;
  for (int64_t t = 0; t < width; ++t) running[t] = kIdentity;
  const In* base = x + o * reduce * inner + j0;
  for (int64_t r = 0; r < reduce; ++r) {
    const In* row = base + r * inner;
    int64_t t = 0;
    for (; t + kLanes <= width; t += kLanes) {
#pragma GCC ivdep
      for (int lane = 0; lane < kLanes; ++lane) {
        running[t + lane] = drk_combine(running[t + lane], drk_get(row[t + lane]));
      }
    }
    for (; t < width; ++t) running[t] = drk_combine(running[t], drk_get(row[t]));
  }
  for (int64_t t = 0; t < width; ++t) drk_put(out + o * inner + j0 + t, drk_result(running[t], reduce));
}
)";
}

}  // namespace

Result<std::string> render_reduction(const Problem& problem, const Choice& choice) {
  auto params = reduce_params(problem);
  if (!params) return params.error();
  const bool is_max = params->op == "max";

  std::string source = kernel_preamble(problem, choice);
  source += substitute(R"(
namespace {

constexpr int64_t kTile = @TILE@;
constexpr float kIdentity = @IDENTITY@;

inline float drk_combine(float acc, float v) { return @COMBINE@; }

inline float drk_result(float acc, int64_t reduce) {
  (void)reduce;
  return @RESULT@;
}
)",
                       {{"TILE", choice.value(reduction_knob::inner_tile)},
                        {"IDENTITY", is_max ? "-INFINITY" : "0.0f"},
                        {"COMBINE", is_max ? "v > acc ? v : acc" : "acc + v"},
                        {"RESULT", params->op == "mean" ? "acc / static_cast<float>(reduce)" : "acc"}});
  const bool sixteen_bit = problem.precision != Precision::float32;
  source += cpu_element_access(problem.precision);
  source += substitute(choice.value(reduction_knob::strategy) == "per_output" ? per_output_function()
                                                                               : accumulate_rows_function(),
                       {{"W", choice.value(reduction_knob::vector_width)}});
  source += "\n}  // namespace\n";
  source += entry_point_opening(1);
  source += reduce_split_dims(*params, sixteen_bit ? "drk_is_dense_16" : "drk_is_dense_f32");
  source += substitute(R"(
  const @ELEMENT@* src = static_cast<const @ELEMENT@*>(x.data);
  @ELEMENT@* dst = static_cast<@ELEMENT@*>(y.data);
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t items = outer * tiles;
  const int workers = drk_thread_count(ctx, @THREADS@, items);
  drk_parallel(workers, [&](int worker, int worker_count) {
    int64_t begin = 0, end = 0;
    drk_share(items, worker, worker_count, &begin, &end);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / tiles;
      const int64_t j0 = (item % tiles) * kTile;
      const int64_t j1 = j0 + kTile < inner ? j0 + kTile : inner;
      drk_reduce_tile(src, dst, reduce, inner, o, j0, j1);
    }
  });
  return DRK_OK;
}
)",
                       {{"THREADS", choice.value(reduction_knob::threads)}, {"ELEMENT", sixteen_bit ? "uint16_t" : "float"}});
  return source;
}

}  // namespace drk::schedule::detail
