#include "kernels/catalog/dtype_variant.h"

#include <algorithm>

namespace drk::kernels {

Result<Task> dtype_variant(const Task& task, DType dtype) {
  if (std::find(std::begin(kVariantDtypes), std::end(kVariantDtypes), dtype) == std::end(kVariantDtypes))
    return make_error(Errc::invalid_argument, "task '" + task.name + "' has no " + std::string(dtype_name(dtype)) +
                                                  " variant: variants are float16 and bfloat16");
  if (task.output_dtype != DType::float32)
    return make_error(Errc::invalid_argument, "task '" + task.name + "' is " + std::string(dtype_name(task.output_dtype)) +
                                                  ": only a float32 task has dtype variants");
  Task variant = task;
  variant.name = task.name + kDtypeVariantSeparator + std::string(dtype_name(dtype));
  variant.title = task.title + " (" + std::string(dtype_name(dtype)) + ")";
  for (auto& input : variant.inputs)
    if (input.dtype == DType::float32) input.dtype = dtype;
  variant.output_dtype = dtype;
  return variant;
}

std::pair<std::string_view, std::string_view> split_variant_name(std::string_view name) {
  const size_t at = name.rfind(kDtypeVariantSeparator);
  if (at == std::string_view::npos) return {name, {}};
  return {name.substr(0, at), name.substr(at + 1)};
}

Status dtype_runs_on(DType dtype, DeviceKind device, int compute_capability) {
  if (device == DeviceKind::cpu) return {};
  const int needed = dtype == DType::bfloat16 ? 80 : dtype == DType::float16 ? 53 : 0;
  if (compute_capability >= needed) return {};
  auto version = [](int capability) { return std::to_string(capability / 10) + "." + std::to_string(capability % 10); };
  return make_error(Errc::unsupported, std::string(dtype_name(dtype)) + " needs a GPU of compute capability " +
                                           version(needed) + " or later" +
                                           (dtype == DType::bfloat16 ? " (Ampere)" : "") + "; this one is " +
                                           version(compute_capability) +
                                           ": evaluate the task's float16 or float32 form here, or on a newer GPU");
}

}  // namespace drk::kernels
