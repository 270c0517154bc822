#include "kernels/schedule/problem.h"

namespace drk::schedule {
namespace {

Result<std::vector<TensorShape>> read_tensors(const std::string& task,
                                              capnp::List<msg::TensorSpec>::Reader specs) {
  std::vector<TensorShape> tensors;
  for (auto spec : specs) {
    if (spec.getDtype() != msg::DType::FLOAT32) {
      return make_error(Errc::invalid_argument,
                        "task '" + task + "': tensor '" + std::string(spec.getName().cStr()) +
                            "' is not float32: the embedded policy renders float32 kernels only");
    }
    TensorShape tensor;
    tensor.name = spec.getName().cStr();
    for (int64_t dim : spec.getShape()) tensor.shape.push_back(dim);
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
  auto inputs = read_tensors(problem.task, task.getInputs());
  if (!inputs) return inputs.error();
  auto outputs = read_tensors(problem.task, task.getOutputs());
  if (!outputs) return outputs.error();
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
