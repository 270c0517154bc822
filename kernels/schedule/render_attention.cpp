// Attention kernels: y = softmax(q k^T / sqrt(E)) v without a mask, q [B,H,Lq,E], k [B,H,Lk,E],
// v [B,H,Lk,Ev], y [B,H,Lq,Ev]. A work item is one query row; the threads split the rows, each
// with its own workspace slice. `algorithm`: materialize computes the row's scores for every
// key (`key_tile` keys at a time), then its softmax, then the weighted sum of v; online walks
// `key_tile` keys at a time with a running max and sum and rescales its accumulator whenever
// the max grows (one pass over k and v). `vector_width` is the number of independent lanes of
// the dot products over E and of the updates of the accumulator over Ev. float16 and bfloat16
// tensors are widened to float32 as read (cpu_element_access) and each output rounded once.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

std::string vector_functions() {
  return R"(
inline float drk_dot(const drk_element* __restrict left, const drk_element* __restrict right, int64_t E) {
  constexpr int kLanes = @W@;
  float lanes[kLanes] = {};
  int64_t e = 0;
  for (; e + kLanes <= E; e += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) lanes[lane] += drk_get(left[e + lane]) * drk_get(right[e + lane]);
  }
  for (; e < E; ++e) lanes[0] += drk_get(left[e]) * drk_get(right[e]);
  float sum = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) sum += lanes[lane];
  return sum;
}

// acc[e] = acc[e] * scale + weight * value[e]
inline void drk_scaled_update(float* __restrict acc, float scale, float weight, const drk_element* __restrict value,
                              int64_t Ev) {
  constexpr int kLanes = @W@;
  int64_t e = 0;
  for (; e + kLanes <= Ev; e += kLanes) {
#pragma GCC ivdep
    for (int lane = 0; lane < kLanes; ++lane) acc[e + lane] = acc[e + lane] * scale + weight * drk_get(value[e + lane]);
  }
  for (; e < Ev; ++e) acc[e] = acc[e] * scale + weight * drk_get(value[e]);
}
)";
}

// void drk_query_row(q_row, k_head, v_head, y_row, Lk, E, Ev, scratch): scratch holds Lk + Ev floats.
std::string materialize_function() {
  return R"(
void drk_query_row(const drk_element* __restrict q_row, const drk_element* __restrict k_head,
                   const drk_element* __restrict v_head, drk_element* __restrict y_row, int64_t Lk, int64_t E, int64_t Ev,
                   float* __restrict scratch) {
  const float scale = 1.0f / sqrtf(static_cast<float>(E));
  float* scores = scratch;
  float* acc = scratch + Lk;
  float row_max = -INFINITY;
  for (int64_t key0 = 0; key0 < Lk; key0 += kKeyTile) {
    const int64_t key1 = key0 + kKeyTile < Lk ? key0 + kKeyTile : Lk;
    for (int64_t key = key0; key < key1; ++key) {
      scores[key] = drk_dot(q_row, k_head + key * E, E) * scale;
      row_max = scores[key] > row_max ? scores[key] : row_max;
    }
  }
  float sum = 0.0f;
  for (int64_t key = 0; key < Lk; ++key) {
    scores[key] = expf(scores[key] - row_max);
    sum += scores[key];
  }
  for (int64_t e = 0; e < Ev; ++e) acc[e] = 0.0f;
  for (int64_t key = 0; key < Lk; ++key) drk_scaled_update(acc, 1.0f, scores[key], v_head + key * Ev, Ev);
  for (int64_t e = 0; e < Ev; ++e) drk_put(y_row + e, acc[e] / sum);
}
)";
}

std::string online_function() {
  return R"(
void drk_query_row(const drk_element* __restrict q_row, const drk_element* __restrict k_head,
                   const drk_element* __restrict v_head, drk_element* __restrict y_row, int64_t Lk, int64_t E, int64_t Ev,
                   float* __restrict scratch) {
  const float scale = 1.0f / sqrtf(static_cast<float>(E));
  float* acc = scratch + Lk;
  float tile_scores[kKeyTile];
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int64_t e = 0; e < Ev; ++e) acc[e] = 0.0f;
  for (int64_t key0 = 0; key0 < Lk; key0 += kKeyTile) {
    const int64_t key1 = key0 + kKeyTile < Lk ? key0 + kKeyTile : Lk;
    float tile_max = -INFINITY;
    for (int64_t key = key0; key < key1; ++key) {
      const float score = drk_dot(q_row, k_head + key * E, E) * scale;
      tile_scores[key - key0] = score;
      tile_max = score > tile_max ? score : tile_max;
    }
    const float new_max = tile_max > running_max ? tile_max : running_max;
    float rescale = running_max == -INFINITY ? 0.0f : expf(running_max - new_max);
    running_sum *= rescale;
    for (int64_t key = key0; key < key1; ++key) {
      const float weight = expf(tile_scores[key - key0] - new_max);
      running_sum += weight;
      drk_scaled_update(acc, rescale, weight, v_head + key * Ev, Ev);
      rescale = 1.0f;
    }
    running_max = new_max;
  }
  for (int64_t e = 0; e < Ev; ++e) drk_put(y_row + e, acc[e] / running_sum);
}
)";
}

}  // namespace

Result<std::string> render_attention(const Problem& problem, const Choice& choice) {
  std::string source = kernel_preamble(problem, choice);
  const bool wide = problem.precision == Precision::float32;
  source += substitute(R"(
namespace {

constexpr int64_t kKeyTile = @KEY_TILE@;
)",
                       {{"KEY_TILE", choice.value(attention_knob::key_tile)}});
  source += cpu_element_access(problem.precision);
  source += wide ? "\nusing drk_element = float;\n" : "\nusing drk_element = uint16_t;\n";
  source += substitute(vector_functions(), {{"W", choice.value(attention_knob::vector_width)}});
  source += choice.value(attention_knob::algorithm) == "online" ? online_function() : materialize_function();
  source += "\n}  // namespace\n";
  source += entry_point_opening(3);
  source += substitute(every_tensor_dense(wide ? "drk_is_dense_f32" : "drk_is_dense_16") + R"(  const drk_tensor& q = inputs[0];
  const drk_tensor& k = inputs[1];
  const drk_tensor& v = inputs[2];
  drk_tensor& y = outputs[0];
  if (q.ndim != 4 || k.ndim != 4 || v.ndim != 4 || y.ndim != 4) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t heads = q.shape[0] * q.shape[1];
  const int64_t Lq = q.shape[2];
  const int64_t E = q.shape[3];
  const int64_t Lk = k.shape[2];
  const int64_t Ev = v.shape[3];
  for (int d = 0; d < 2; ++d) {
    if (k.shape[d] != q.shape[d] || v.shape[d] != q.shape[d] || y.shape[d] != q.shape[d]) {
      return DRK_E_UNSUPPORTED_SHAPE;
    }
  }
  if (k.shape[3] != E || v.shape[2] != Lk || y.shape[2] != Lq || y.shape[3] != Ev) return DRK_E_UNSUPPORTED_SHAPE;
  if (heads * Lq * Ev == 0) return DRK_OK;
  if (Lk == 0 || E == 0) return DRK_E_UNSUPPORTED_SHAPE;
  const drk_element* q_data = static_cast<const drk_element*>(q.data);
  const drk_element* k_data = static_cast<const drk_element*>(k.data);
  const drk_element* v_data = static_cast<const drk_element*>(v.data);
  drk_element* y_data = static_cast<drk_element*>(y.data);
  const int64_t rows = heads * Lq;
  const int workers = drk_thread_count(ctx, @THREADS@, rows);
  const int64_t scratch_floats = Lk + Ev;
  float* scratch = nullptr;
  if (ctx != nullptr && ctx->workspace != nullptr) {
    scratch = static_cast<float*>(
        ctx->workspace(ctx, static_cast<size_t>(workers) * static_cast<size_t>(scratch_floats) * sizeof(float)));
  }
  if (scratch == nullptr) return DRK_E_WORKSPACE;
  drk_parallel(workers, [&](int worker, int worker_count) {
    int64_t begin = 0, end = 0;
    drk_share(rows, worker, worker_count, &begin, &end);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t head = row / Lq;
      drk_query_row(q_data + row * E, k_data + head * Lk * E, v_data + head * Lk * Ev, y_data + row * Ev, Lk, E, Ev,
                    scratch + worker * scratch_floats);
    }
  });
  return DRK_OK;
}
)",
                       {{"THREADS", choice.value(attention_knob::threads)}});
  return source;
}

}  // namespace drk::schedule::detail
