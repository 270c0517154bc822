#include "actors/evaluator/cuda/cuda_sandbox_device.h"

#include <memory>
#include <utility>

#include "actors/evaluator/python/python_candidate.h"

namespace drk::evaluator {
namespace {

// The LibTorch dtype of a drk_dtype: reference inputs are made with the dtype the Evaluator
// drew them in (float32, int64 class indices, ...); nullopt for a value that is no drk_dtype.
static_assert(static_cast<int>(kernels::DType::float32) == DRK_F32 && static_cast<int>(kernels::DType::float16) == DRK_F16 &&
              static_cast<int>(kernels::DType::int64) == DRK_I64 &&
              static_cast<int>(kernels::DType::float8_e5m2) == DRK_F8E5M2);
std::optional<at::ScalarType> scalar_type(int32_t dtype) {
  if (dtype < DRK_F32 || dtype > DRK_F8E5M2) return std::nullopt;
  return kernels::scalar_type_of(static_cast<kernels::DType>(dtype));
}

}  // namespace

std::optional<CudaSandboxDevice::ReferenceSide> CudaSandboxDevice::reference_side(msg::ReferenceSpec::Reader spec,
                                                                                  CandidateCalls& calls,
                                                                                  msg::SandboxReply::Builder reply) {
  if (calls.reference_kernel) {
    return ReferenceSide{[this, &calls](size_t set) -> Status {
                           if (call_kernel(calls.reference_kernel, calls, set) == DRK_OK) return {};
                           return make_error(Errc::invalid_argument, python_candidate_error());
                         },
                         stream_};
  }
  auto reference = reference_for(spec);
  if (!reference) {
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage("the reference cannot be evaluated here: " + reference.error().message);
    return std::nullopt;
  }
  auto inputs = std::make_shared<std::vector<std::vector<at::Tensor>>>();
  if (!reference_inputs_for(calls, *inputs, reply)) return std::nullopt;
  return ReferenceSide{[expression = *reference, inputs](size_t set) -> Status {
                         auto value = expression->run((*inputs)[set]);
                         if (!value) return value.error();
                         return {};
                       },
                       nullptr};
}

Result<const kernels::Reference*> CudaSandboxDevice::reference_for(msg::ReferenceSpec::Reader spec) {
  std::string key = spec.getExpression();
  for (auto name : spec.getInputNames()) key += std::string("\n") + name.cStr();
  for (int32_t dtype : spec.getInputDtypes()) key += "\n" + std::to_string(dtype);
  if (reference_ && key == reference_key_) return &*reference_;
  kernels::Task task;
  task.name = "reference";
  task.reference = spec.getExpression();
  const auto names = spec.getInputNames();
  const auto dtypes = spec.getInputDtypes();
  for (unsigned i = 0; i < names.size(); ++i) {
    // An old sender's spec has no dtypes: its inputs are float32 (or int64, which the reference
    // reads from the tensors themselves).
    const int32_t dtype = i < dtypes.size() ? dtypes[i] : DRK_F32;
    if (!scalar_type(dtype))
      return make_error(Errc::invalid_argument, "reference input '" + std::string(names[i].cStr()) + "' has dtype " +
                                                    std::to_string(dtype) + ", which is no drk_dtype");
    task.inputs.push_back(kernels::InputSpec{names[i].cStr(), static_cast<kernels::DType>(dtype), {}});
  }
  auto reference = kernels::Reference::create(task);
  if (!reference) return reference.error();
  reference_.emplace(std::move(*reference));
  reference_key_ = key;
  return &*reference_;
}

bool CudaSandboxDevice::reference_inputs_for(const CandidateCalls& calls, std::vector<std::vector<at::Tensor>>& inputs,
                                             msg::SandboxReply::Builder reply) {
  inputs.assign(calls.inputs.size(), {});
  try {
    for (size_t s = 0; s < calls.inputs.size(); ++s)
      for (const auto& tensor : calls.inputs[s]) {
        auto type = scalar_type(tensor.dtype);
        if (!type) {
          reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
          reply.setMessage("an input has dtype " + std::to_string(tensor.dtype) + ", which LibTorch has no type for");
          return false;
        }
        auto options = at::TensorOptions().dtype(*type).device(at::kCUDA, 0);
        inputs[s].push_back(
            at::from_blob(tensor.data, at::IntArrayRef(tensor.shape, static_cast<size_t>(tensor.ndim)), options));
      }
  } catch (const c10::Error& e) {
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage(std::string("LibTorch cannot use the CUDA device: ") + e.what_without_backtrace());
    return false;
  }
  return true;
}

}  // namespace drk::evaluator
