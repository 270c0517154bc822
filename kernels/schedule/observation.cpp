#include "kernels/schedule/observation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "kernels/schedule/stages.h"

namespace drk::schedule {
namespace {

constexpr int kFamilyOffset = 0;
constexpr int kSizeOffset = 3;
constexpr int kOperationOffset = 7;
constexpr int kTurnOffset = 11;
constexpr int kOptionOffset = 13;
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

void describe_problem(const Problem& problem, float* sizes, float* operation) {
  const std::vector<int64_t> empty;
  const auto& first = problem.inputs.empty() ? empty : problem.inputs.front().shape;
  switch (problem.family) {
    case Family::elementwise:
      sizes[0] = log_size(element_count(first));
      operation[0] = stage_count(problem.param_or("stages", "v"));
      break;
    case Family::rowwise: {
      const int rank = static_cast<int>(first.size());
      int begin = std::atoi(problem.param_or("reduce_begin", "0").c_str());
      int end = std::atoi(problem.param_or("reduce_end", "0").c_str());
      if (begin < 0) begin += rank;
      if (end < 0) end += rank;
      sizes[0] = log_size(dim_product(first, 0, begin));
      sizes[1] = log_size(dim_product(first, begin, end + 1));
      sizes[2] = log_size(dim_product(first, end + 1, rank));
      const std::string op = problem.param_or("op", "");
      const char* ops[] = {"softmax", "log_softmax", "rms_norm", "layer_norm"};
      for (int index = 0; index < 4; ++index) operation[index] = op == ops[index] ? 1.0f : 0.0f;
      break;
    }
    case Family::gemm: {
      const bool transposed = problem.param_or("b_layout", "kn") == "nk";
      const int64_t m = first.size() == 2 ? first[0] : 0;
      const int64_t k = first.size() == 2 ? first[1] : 0;
      int64_t n = 0;
      if (problem.inputs.size() >= 2 && problem.inputs[1].shape.size() == 2) {
        n = problem.inputs[1].shape[transposed ? 0 : 1];
      }
      sizes[0] = log_size(m);
      sizes[1] = log_size(n);
      sizes[2] = log_size(k);
      operation[0] = transposed ? 1.0f : 0.0f;
      operation[1] = problem.param_or("bias", "false") == "true" ? 1.0f : 0.0f;
      operation[2] = stage_count(problem.param_or("epilogue", "v"));
      operation[3] = problem.precision == Precision::float16 ? 1.0f : 0.0f;
      break;
    }
  }
}

}  // namespace

int observation_size(Device device) { return kOptionOffset + max_option_slots(device) + kFeedbackSize; }

int half_precision_feature(Family family) { return family == Family::gemm ? kOperationOffset + 3 : -1; }

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
