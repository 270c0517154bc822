// Cross-entropy kernels: loss[] = mean over rows n of logsumexp(predictions[n, :]) -
// predictions[n, targets[n]], predictions [N, C] float32, float16 or bfloat16, targets [N] int64
// (checked to lie in [0, C)). 16-bit predictions are widened to float32 as read, and the loss is
// rounded to their type once (cpu_element_access). A work item is `rows_per_item` consecutive rows; the threads split the items, each
// item's loss sum (double) lands in a workspace slot, and the slots are added in item order, so
// the result does not depend on the thread count. `passes`: three_pass reads a row for its max,
// again for the sum of exp(v - max), then picks the target; online keeps a running max and a
// sum rescaled whenever the max grows, in one read. `vector_width` lanes keep independent
// partial maxima and sums, merged at the end of the row.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

// float drk_row_logsumexp(const drk_element* row, int64_t C): each element widened by drk_get
std::string logsumexp_function(bool online) {
  const std::string head = R"(
float drk_row_logsumexp(const drk_element* __restrict row, int64_t C) {
  constexpr int kLanes = @W@;
  float lane_max[kLanes];
  float lane_sum[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    lane_max[lane] = -INFINITY;
    lane_sum[lane] = 0.0f;
  }
  int64_t c = 0;
)";
  const std::string online_body = R"(  for (; c + kLanes <= C; c += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) drk_online_step(lane_max[lane], lane_sum[lane], drk_get(row[c + lane]));
  }
  for (; c < C; ++c) drk_online_step(lane_max[0], lane_sum[0], drk_get(row[c]));
  float row_max = lane_max[0];
  for (int lane = 1; lane < kLanes; ++lane) row_max = lane_max[lane] > row_max ? lane_max[lane] : row_max;
  float total = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (lane_sum[lane] > 0.0f) total += lane_sum[lane] * expf(lane_max[lane] - row_max);
  }
  return row_max + logf(total);
}
)";
  const std::string three_pass_body = R"(  for (; c + kLanes <= C; c += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float v = drk_get(row[c + lane]);
      lane_max[lane] = v > lane_max[lane] ? v : lane_max[lane];
    }
  }
  for (; c < C; ++c) lane_max[0] = drk_get(row[c]) > lane_max[0] ? drk_get(row[c]) : lane_max[0];
  float row_max = lane_max[0];
  for (int lane = 1; lane < kLanes; ++lane) row_max = lane_max[lane] > row_max ? lane_max[lane] : row_max;
  c = 0;
  for (; c + kLanes <= C; c += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) lane_sum[lane] += expf(drk_get(row[c + lane]) - row_max);
  }
  for (; c < C; ++c) lane_sum[0] += expf(drk_get(row[c]) - row_max);
  float total = 0.0f;
  for (int lane = 0; lane < kLanes; ++lane) total += lane_sum[lane];
  return row_max + logf(total);
}
)";
  const std::string online_step = R"(
// One element into a running (max, sum of exp(v - max)).
inline void drk_online_step(float& running_max, float& running_sum, float v) {
  if (v > running_max) {
    running_sum = running_sum * expf(running_max - v) + 1.0f;
    running_max = v;
  } else {
    running_sum += expf(v - running_max);
  }
}
)";
  return online ? online_step + head + online_body : head + three_pass_body;
}

}  // namespace

Result<std::string> render_cross_entropy(const Problem& problem, const Choice& choice) {
  const bool online = choice.value(cross_entropy_knob::passes) == "online";
  std::string source = kernel_preamble(problem, choice);
  const bool wide = problem.precision == Precision::float32;
  source += "\nnamespace {\n";
  source += cpu_element_access(problem.precision);
  source += wide ? "\nusing drk_element = float;\n" : "\nusing drk_element = uint16_t;\n";
  source += dense_check("drk_is_dense_i64", "DRK_I64");
  source += substitute(logsumexp_function(online), {{"W", choice.value(cross_entropy_knob::vector_width)}});
  source += "\n}  // namespace\n";
  source += entry_point_opening(2);
  source += substitute(R"(
  const drk_tensor& predictions = inputs[0];
  const drk_tensor& targets = inputs[1];
  drk_tensor& loss = outputs[0];
  if (!@DENSE@(predictions) || !drk_is_dense_i64(targets) || !@DENSE@(loss)) {
    return DRK_E_BAD_ARGUMENT;
  }
  if (predictions.ndim != 2 || targets.ndim != 1 || loss.ndim != 0) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t N = predictions.shape[0];
  const int64_t C = predictions.shape[1];
  if (targets.shape[0] != N) return DRK_E_UNSUPPORTED_SHAPE;
  drk_element* result = static_cast<drk_element*>(loss.data);
  if (N == 0) {
    drk_put(result, NAN);
    return DRK_OK;
  }
  const drk_element* logits = static_cast<const drk_element*>(predictions.data);
  const int64_t* classes = static_cast<const int64_t*>(targets.data);
  for (int64_t n = 0; n < N; ++n) {
    if (classes[n] < 0 || classes[n] >= C) return DRK_E_BAD_ARGUMENT;
  }
  constexpr int64_t kRowsPerItem = @ROWS@;
  const int64_t items = (N + kRowsPerItem - 1) / kRowsPerItem;
  double* partial = nullptr;
  if (ctx != nullptr && ctx->workspace != nullptr) {
    partial = static_cast<double*>(ctx->workspace(ctx, static_cast<size_t>(items) * sizeof(double)));
  }
  if (partial == nullptr) return DRK_E_WORKSPACE;
  const int workers = drk_thread_count(ctx, @THREADS@, items);
  drk_parallel(workers, [&](int worker, int worker_count) {
    int64_t begin = 0, end = 0;
    drk_share(items, worker, worker_count, &begin, &end);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t first = item * kRowsPerItem;
      const int64_t last = first + kRowsPerItem < N ? first + kRowsPerItem : N;
      double sum = 0.0;
      for (int64_t n = first; n < last; ++n) {
        const drk_element* row = logits + n * C;
        sum += static_cast<double>(drk_row_logsumexp(row, C) - drk_get(row[classes[n]]));
      }
      partial[item] = sum;
    }
  });
  double total = 0.0;
  for (int64_t item = 0; item < items; ++item) total += partial[item];
  drk_put(result, static_cast<float>(total / static_cast<double>(N)));
  return DRK_OK;
}
)",
                       {{"ROWS", choice.value(cross_entropy_knob::rows_per_item)},
                        {"THREADS", choice.value(cross_entropy_knob::threads)},
                        {"DENSE", wide ? "drk_is_dense_f32" : "drk_is_dense_16"}});
  return source;
}

}  // namespace drk::schedule::detail
