#include "kernels/schedule/observation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include "kernels/schedule/stages.h"

namespace drk::schedule {
namespace {

constexpr int kFamilyOffset = 0;
constexpr int kSizeOffset = kFamilyOffset + kFamilyCount;
constexpr int kOperationOffset = kSizeOffset + 4;
constexpr int kTurnOffset = kOperationOffset + 4;
constexpr int kOptionOffset = kTurnOffset + 2;
constexpr int kFeedbackSize = 5;

float log_size(int64_t size) {
  return static_cast<float>(std::log2(1.0 + static_cast<double>(std::max<int64_t>(size, 0))) / 32.0);
}

float stage_count(const std::string& text) {
  auto stages = parse_stages(text);
  return stages ? static_cast<float>(stages->size()) / 8.0f : 0.0f;
}

int64_t dim_product(const std::vector<int64_t>& shape, int begin, int end) {
  int64_t product = 1;
  for (int dim = std::max(begin, 0); dim < std::min<int>(end, static_cast<int>(shape.size())); ++dim) {
    product *= shape[static_cast<size_t>(dim)];
  }
  return product;
}

int64_t dim(const std::vector<int64_t>& shape, int index) {
  if (index < 0) index += static_cast<int>(shape.size());
  return index >= 0 && index < static_cast<int>(shape.size()) ? shape[static_cast<size_t>(index)] : 0;
}

// outer x reduce x inner of `shape` around the inclusive range [begin, end] of reduced dims.
void describe_split(const std::vector<int64_t>& shape, int begin, int end, float* sizes) {
  const int rank = static_cast<int>(shape.size());
  if (begin < 0) begin += rank;
  if (end < 0) end += rank;
  sizes[0] = log_size(dim_product(shape, 0, begin));
  sizes[1] = log_size(dim_product(shape, begin, end + 1));
  sizes[2] = log_size(dim_product(shape, end + 1, rank));
}

void one_hot(const std::string& value, std::initializer_list<const char*> names, float* slots) {
  int index = 0;
  for (const char* name : names) slots[index++] = value == name ? 1.0f : 0.0f;
}

// M, N, K and the batch (the product of the leading dims) of a (batched) GEMM's operands.
void describe_gemm(const Problem& problem, float* sizes, float* operation) {
  const bool transposed = problem.param_or("b_layout", "kn") == "nk";
  const std::vector<int64_t> empty;
  const auto& a = problem.inputs.empty() ? empty : problem.inputs[0].shape;
  const auto& b = problem.inputs.size() < 2 ? empty : problem.inputs[1].shape;
  const int rank = static_cast<int>(a.size());
  sizes[0] = log_size(rank >= 2 ? dim(a, -2) : 0);
  sizes[1] = log_size(b.size() >= 2 ? dim(b, transposed ? -2 : -1) : 0);
  sizes[2] = log_size(rank >= 2 ? dim(a, -1) : 0);
  sizes[3] = log_size(rank > 2 ? dim_product(a, 0, rank - 2) : 1);
  operation[0] = transposed ? 1.0f : 0.0f;
  operation[1] = problem.param_or("bias", "false") == "true" ? 1.0f : 0.0f;
  operation[2] = stage_count(problem.param_or("epilogue", "v"));
  operation[3] = problem.precision != Precision::float32 ? 1.0f : 0.0f;
}

void describe_problem(const Problem& problem, float* sizes, float* operation) {
  const std::vector<int64_t> empty;
  const auto& first = problem.inputs.empty() ? empty : problem.inputs.front().shape;
  const auto& second = problem.inputs.size() < 2 ? empty : problem.inputs[1].shape;
  const auto& output = problem.outputs.empty() ? empty : problem.outputs.front().shape;
  switch (problem.family) {
    case Family::elementwise:
      sizes[0] = log_size(element_count(first));
      operation[0] = stage_count(problem.param_or("stages", "v"));
      operation[1] = problem.precision == Precision::float16 ? 1.0f : 0.0f;
      operation[2] = problem.precision == Precision::bfloat16 || is_float8(problem.precision) ? 1.0f : 0.0f;
      operation[3] = is_float8(problem.precision) ? 1.0f : 0.0f;
      break;
    case Family::rowwise:
      describe_split(first, std::atoi(problem.param_or("reduce_begin", "0").c_str()),
                     std::atoi(problem.param_or("reduce_end", "0").c_str()), sizes);
      one_hot(problem.param_or("op", ""), {"softmax", "log_softmax", "rms_norm", "layer_norm"}, operation);
      break;
    case Family::reduction: {
      const int reduced = std::atoi(problem.param_or("dim", "0").c_str());
      describe_split(first, reduced, reduced, sizes);
      one_hot(problem.param_or("op", ""), {"sum", "mean", "max"}, operation);
      break;
    }
    case Family::gemm:
    case Family::batched_gemm:
      describe_gemm(problem, sizes, operation);
      break;
    case Family::conv2d:
      sizes[0] = log_size(dim(output, 0) * dim(output, 2) * dim(output, 3));
      sizes[1] = log_size(dim(second, 0));
      sizes[2] = log_size(dim(second, 1) * dim(second, 2) * dim(second, 3));
      operation[0] = problem.param_or("bias", "false") == "true" ? 1.0f : 0.0f;
      operation[1] = stage_count(problem.param_or("epilogue", "v"));
      operation[2] = static_cast<float>(dim(second, 2) * dim(second, 3)) / 16.0f;
      break;
    case Family::cross_entropy:
      sizes[0] = log_size(dim(first, 0));
      sizes[1] = log_size(dim(first, 1));
      break;
    case Family::attention:
      sizes[0] = log_size(first.size() >= 2 ? dim_product(first, 0, static_cast<int>(first.size()) - 2) : 0);
      sizes[1] = log_size(dim(first, -2));
      sizes[2] = log_size(dim(second, -2));
      sizes[3] = log_size(dim(first, -1));
      break;
  }
}

}  // namespace

int observation_size(Device device) { return kOptionOffset + max_option_slots(device) + kFeedbackSize; }

int half_precision_feature(Family family) {
  return family == Family::gemm || family == Family::batched_gemm ? kOperationOffset + 3 : -1;
}

std::vector<float> observe(const Problem& problem, int turn, int max_turns,
                           const std::optional<PreviousTurn>& previous) {
  std::vector<float> features(static_cast<size_t>(observation_size(problem.device)), 0.0f);
  features[kFamilyOffset + static_cast<int>(problem.family)] = 1.0f;
  describe_problem(problem, &features[kSizeOffset], &features[kOperationOffset]);
  features[kTurnOffset] = static_cast<float>(turn) / static_cast<float>(std::max(max_turns, 1));
  if (!previous) return features;
  features[kTurnOffset + 1] = 1.0f;
  int slot = kOptionOffset;
  const auto family_knobs = knobs(previous->choice.family, problem.device);
  for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
    if (knob < previous->choice.options.size() &&
        previous->choice.options[knob] < family_knobs[knob].options.size()) {
      features[static_cast<size_t>(slot + previous->choice.options[knob])] = 1.0f;
    }
    slot += static_cast<int>(family_knobs[knob].options.size());
  }
  const int feedback = kOptionOffset + max_option_slots(problem.device);
  features[feedback + 0] = previous->compiled ? 1.0f : 0.0f;
  features[feedback + 1] = previous->correct ? 1.0f : 0.0f;
  features[feedback + 2] = previous->honest ? 1.0f : 0.0f;
  if (previous->correct && previous->speedup > 0.0) {
    features[feedback + 3] =
        static_cast<float>(std::clamp(std::log(previous->speedup), -3.0, 3.0) / 3.0);
  }
  features[feedback + 4] = static_cast<float>(previous->reward / 3.0);
  return features;
}

}  // namespace drk::schedule
