#include "kernels/schedule/problem.h"

#include <optional>

namespace drk::schedule {
namespace {

// The tensors' shapes; `precision` becomes their dtype (that of the first float tensor read).
// int64 tensors are class indices, allowed where `allow_class_indices`.
Result<std::vector<TensorShape>> read_tensors(const std::string& task, capnp::List<msg::TensorSpec>::Reader specs,
                                              bool allow_class_indices, std::optional<Precision>& precision) {
  std::vector<TensorShape> tensors;
  bool after_float8 = false;
  for (auto spec : specs) {
    TensorShape tensor;
    tensor.name = spec.getName().cStr();
    for (int64_t dim : spec.getShape()) tensor.shape.push_back(dim);
    if (allow_class_indices && spec.getDtype() == msg::DType::INT64) {
      tensor.class_indices = true;
      tensors.push_back(std::move(tensor));
      continue;
    }
    // An FP8 input's float32 scale follows it (kernels/abi/drk_kernel.h).
    if (after_float8 && spec.getDtype() == msg::DType::FLOAT32) {
      tensor.scale = true;
      after_float8 = false;
      tensors.push_back(std::move(tensor));
      continue;
    }
    std::optional<Precision> dtype;
    if (spec.getDtype() == msg::DType::FLOAT32) dtype = Precision::float32;
    if (spec.getDtype() == msg::DType::FLOAT16) dtype = Precision::float16;
    if (spec.getDtype() == msg::DType::BFLOAT16) dtype = Precision::bfloat16;
    if (spec.getDtype() == msg::DType::FLOAT8E4M3FN) dtype = Precision::float8_e4m3fn;
    if (spec.getDtype() == msg::DType::FLOAT8E5M2) dtype = Precision::float8_e5m2;
    after_float8 = dtype && is_float8(*dtype);
    if (!dtype || (precision && *precision != *dtype)) {
      return make_error(Errc::invalid_argument,
                        "task '" + task + "': tensor '" + std::string(spec.getName().cStr()) +
                            "' breaks the rule of the embedded policy's kernels: every tensor of one floating "
                            "dtype (int64 only for a cross_entropy task's class indices; an FP8 task's inputs in one "
                            "FP8 format, each followed by its float32 scale, and its output bfloat16)");
    }
    precision = dtype;
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

}  // namespace

Result<std::string> Problem::param(const std::string& key) const {
  const auto found = params.find(key);
  if (found == params.end()) {
    return make_error(Errc::not_found, "task '" + task + "' lacks the " +
                                           std::string(family_name(family)) + " parameter '" +
                                           key + "': add it under params in its YAML file");
  }
  return found->second;
}

std::string Problem::param_or(const std::string& key, const std::string& fallback) const {
  const auto found = params.find(key);
  return found == params.end() ? fallback : found->second;
}

Result<Problem> problem_from_task(msg::Task::Reader task) {
  Problem problem;
  problem.task = task.getName().cStr();
  auto family = parse_family(task.getFamily().cStr());
  if (!family) {
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "': " + family.error().message);
  }
  problem.family = *family;
  problem.device = device_of(task.getDevice());
  for (auto param : task.getParams()) {
    problem.params[param.getKey().cStr()] = param.getValue().cStr();
  }
  std::optional<Precision> precision;
  const bool class_indices = problem.family == Family::cross_entropy;
  auto inputs = read_tensors(problem.task, task.getInputs(), class_indices, precision);
  if (!inputs) return inputs.error();
  // An FP8 task's output is bfloat16, any other's its inputs' dtype; the task is known by its inputs'.
  std::optional<Precision> output_precision =
      precision && is_float8(*precision) ? std::optional(Precision::bfloat16) : precision;
  auto outputs = read_tensors(problem.task, task.getOutputs(), false, output_precision);
  if (!outputs) return outputs.error();
  problem.precision = precision.value_or(output_precision.value_or(Precision::float32));
  if (!renders_precision(problem.family, problem.device, problem.precision)) {
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "' is a " + std::string(precision_name(problem.precision)) + " " +
                          std::string(device_name(problem.device)) + " " + std::string(family_name(problem.family)) +
                          " task, which the embedded policy does not render (it renders " + rendered_precisions() +
                          "): a language-model Generator or drk eval evaluates its candidates");
  }
  problem.inputs = std::move(*inputs);
  problem.outputs = std::move(*outputs);
  return problem;
}

Device device_of(msg::Device device) { return device == msg::Device::CUDA ? Device::cuda : Device::cpu; }

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

}  // namespace drk::schedule
