#include "actors/generator/llm/task_brief.h"

#include "base/file_system.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "messages/enumerant_name.h"

namespace drk::generator {
namespace {

// "x: float32[1024, 1024]", one tensor a line.
std::string tensor_lines(capnp::List<msg::TensorSpec>::Reader tensors) {
  std::string out;
  for (const auto tensor : tensors) {
    out += "- " + std::string(tensor.getName().cStr()) + ": " + msg::enumerant_name(tensor.getDtype()) + "[";
    bool first = true;
    for (const int64_t extent : tensor.getShape()) {
      out += (first ? "" : ", ") + std::to_string(extent);
      first = false;
    }
    out += "]";
    // An FP8 tensor's bytes mean nothing without their format and scale (kernels/abi/drk_kernel.h).
    if (tensor.getDtype() == msg::DType::FLOAT8E4M3FN)
      out += " (bytes, OCP FP8 e4m3fn: sign, 4 exponent bits with bias 7, 3 mantissa bits, no infinities, "
             "largest 448; each element's value is its decoded byte times the float32 scale that follows it)";
    if (tensor.getDtype() == msg::DType::FLOAT8E5M2)
      out += " (bytes, OCP FP8 e5m2: sign, 5 exponent bits with bias 15, 2 mantissa bits, largest 57344; each "
             "element's value is its decoded byte times the float32 scale that follows it)";
    out += "\n";
  }
  return out;
}

// The problem file of a KernelBench task, as imported (kernels/catalog/kernelbench_problem.h).
Result<std::string> kernelbench_source(const std::string& name) {
  auto problem = kernels::load_kernelbench_problem(kernels::default_kernelbench_directory(), name);
  if (!problem) return problem.error();
  return real_file_system().read_file(problem->source);
}

}  // namespace

Result<TaskBrief> task_brief(msg::Task::Reader task, const std::string& kernelbench_backend) {
  TaskBrief brief;
  brief.name = task.getName().cStr();
  brief.device = task.getDevice() == msg::Device::CUDA ? "cuda" : "cpu";
  brief.kernelbench = brief.name.rfind("kernelbench/", 0) == 0;
  if (brief.kernelbench) {
    auto source = kernelbench_source(brief.name);
    if (!source) return source.error();
    brief.problem_source = std::move(*source);
    brief.backend = kernelbench_backend;
    return brief;
  }
  brief.family = task.getFamily().cStr();
  brief.language = task.getDevice() == msg::Device::CUDA ? "CUDA C++" : "C++";
  brief.inputs = tensor_lines(task.getInputs());
  brief.outputs = tensor_lines(task.getOutputs());
  brief.reference = task.getReference().cStr();
  const std::string range = task.getShapeRange().cStr();
  brief.shapes = range.empty()
                     ? "these, and one more trial at slightly larger shapes checks that the kernel reads them from "
                       "the tensors"
                     : "these, and in each evaluation a few more drawn from a range (" + range +
                           "): read the shapes from the tensors; return DRK_E_UNSUPPORTED_SHAPE for a shape you do "
                           "not handle, which lowers the reward (a wrong answer fails the kernel)";
  // ShapeRange::describe() ends with the timed shapes when the range declares them.
  if (range.find("; timed at ") != std::string::npos)
    brief.shapes += ". The kernel is also timed at the shapes after \"timed at\", and the speedup rewarded is the "
                    "geometric mean over these shapes and those: make it fast at all of them, not at one";
  return brief;
}

}  // namespace drk::generator
