#include "kernels/catalog/dtype_variant.h"

#include <algorithm>

namespace drk::kernels {
namespace {

// Each float32 input becomes `dtype`, and is followed by its scale: float32, one element, drawn
// with the input (draw kind scale), at shape [1] wherever the task has shapes.
Status quantise_inputs(Task& variant, DType dtype) {
  std::vector<InputSpec> inputs;
  for (const auto& input : variant.inputs) {
    inputs.push_back(input);
    if (input.dtype != DType::float32) continue;
    inputs.back().dtype = dtype;
    InputSpec scale{float8_scale_name(input.name), DType::float32, {}};
    scale.draw.kind = "scale";
    if (std::any_of(variant.inputs.begin(), variant.inputs.end(), [&](const InputSpec& other) { return other.name == scale.name; }))
      return make_error(Errc::invalid_argument, "task '" + variant.name + "' has an input named '" + scale.name +
                                                    "', the name of its FP8 variant's scale of '" + input.name +
                                                    "': rename that input");
    for (auto* shapes : {&variant.cpu_shapes, &variant.gpu_shapes, &variant.cpu_second_shapes, &variant.gpu_second_shapes})
      if (!shapes->empty()) (*shapes)[scale.name] = {1};
    for (auto* range : {&variant.cpu_shape_range, &variant.gpu_shape_range})
      if (*range) (*range)->tensors[scale.name] = {DimRef{"", 1}};
    inputs.push_back(std::move(scale));
  }
  variant.inputs = std::move(inputs);
  return {};
}

}  // namespace

Result<Task> dtype_variant(const Task& task, DType dtype) {
  if (std::find(std::begin(kVariantDtypes), std::end(kVariantDtypes), dtype) == std::end(kVariantDtypes))
    return make_error(Errc::invalid_argument, "task '" + task.name + "' has no " + std::string(dtype_name(dtype)) +
                                                  " variant: variants are float16, bfloat16, float8_e4m3fn and "
                                                  "float8_e5m2");
  if (task.output_dtype != DType::float32)
    return make_error(Errc::invalid_argument, "task '" + task.name + "' is " + std::string(dtype_name(task.output_dtype)) +
                                                  ": only a float32 task has dtype variants");
  Task variant = task;
  variant.name = task.name + kDtypeVariantSeparator + std::string(dtype_name(dtype));
  if (is_float8(dtype)) {
    variant.title = task.title + " (" + std::string(dtype_name(dtype)) + " inputs with scales, " +
                    std::string(dtype_name(kFloat8OutputDtype)) + " output)";
    if (auto quantised = quantise_inputs(variant, dtype); !quantised) return quantised.error();
    variant.output_dtype = kFloat8OutputDtype;
    return variant;
  }
  variant.title = task.title + " (" + std::string(dtype_name(dtype)) + ")";
  for (auto& input : variant.inputs)
    if (input.dtype == DType::float32) input.dtype = dtype;
  variant.output_dtype = dtype;
  return variant;
}

std::string float8_scale_name(const std::string& input) { return input + "_scale"; }

std::pair<std::string_view, std::string_view> split_variant_name(std::string_view name) {
  const size_t at = name.rfind(kDtypeVariantSeparator);
  if (at == std::string_view::npos) return {name, {}};
  return {name.substr(0, at), name.substr(at + 1)};
}

Status dtype_runs_on(DType dtype, DeviceKind device, int compute_capability) {
  if (device == DeviceKind::cpu) return {};
  const int needed = is_float8(dtype) ? 89 : dtype == DType::bfloat16 ? 80 : dtype == DType::float16 ? 53 : 0;
  if (compute_capability >= needed) return {};
  auto version = [](int capability) { return std::to_string(capability / 10) + "." + std::to_string(capability % 10); };
  const char* generation = is_float8(dtype) ? " (Ada or Hopper: FP8 tensor cores)" : dtype == DType::bfloat16 ? " (Ampere)" : "";
  const char* instead = is_float8(dtype) ? ": evaluate the task's bfloat16 or float16 form here, or on a newer GPU"
                                         : ": evaluate the task's float16 or float32 form here, or on a newer GPU";
  return make_error(Errc::unsupported, std::string(dtype_name(dtype)) + " needs a GPU of compute capability " +
                                           version(needed) + " or later" + generation + "; this one is " +
                                           version(compute_capability) + instead);
}

}  // namespace drk::kernels
