#include "kernels/schedule/render.h"

#include "kernels/schedule/render_parts.h"

namespace drk::schedule {
namespace detail {

std::string kernel_preamble(const Problem& problem, const Choice& choice) {
  std::string source;
  source += "// drkernel embedded policy: task '" + problem.task + "', " +
            std::string(family_name(choice.family)) + " schedule: " + choice.describe() + "\n";
  source += R"(#include "drk_kernel.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <thread>

namespace {

// Row-major and dense: every dimension of extent > 1 has the packed stride.
bool drk_is_dense_f32(const drk_tensor& tensor) {
  if (tensor.dtype != DRK_F32 || tensor.ndim < 0 || tensor.ndim > DRK_MAX_DIMS) return false;
  int64_t expected = 1;
  for (int dim = tensor.ndim - 1; dim >= 0; --dim) {
    if (tensor.shape[dim] < 0) return false;
    if (tensor.shape[dim] != 1 && tensor.strides[dim] != expected) return false;
    expected *= tensor.shape[dim];
  }
  return expected == 0 || tensor.data != nullptr;
}

int64_t drk_element_count(const drk_tensor& tensor) {
  int64_t count = 1;
  for (int dim = 0; dim < tensor.ndim; ++dim) count *= tensor.shape[dim];
  return count;
}

bool drk_same_shape(const drk_tensor& left, const drk_tensor& right) {
  if (left.ndim != right.ndim) return false;
  for (int dim = 0; dim < left.ndim; ++dim) {
    if (left.shape[dim] != right.shape[dim]) return false;
  }
  return true;
}

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

std::string stage_function(const std::string& name, const std::vector<std::string>& stages) {
  std::string source = "static inline float " + name + "(float v) {\n";
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
  if (auto status = validate(choice); !status) return status.error();
  switch (choice.family) {
    case Family::elementwise: return detail::render_elementwise(problem, choice);
    case Family::rowwise: return detail::render_rowwise(problem, choice);
    case Family::gemm: return detail::render_gemm(problem, choice);
  }
  return make_error(Errc::internal, "unknown family");
}

}  // namespace drk::schedule
