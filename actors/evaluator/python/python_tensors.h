// Tensors across the boundary between this process's LibTorch and its embedded Python's torch,
// which are the same library: through DLPack, without a copy (the memory stays where it is and
// stays owned by the side that made it).
//
// Thread-safety: under a PythonLock (python_runtime.h). Errors: invalid_argument, naming what was
// given, when a Python object is not a plain dense torch.Tensor.
#pragma once

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "actors/evaluator/python/python_runtime.h"

namespace drk::evaluator {

// A torch.Tensor (in Python) sharing `tensor`'s memory; null with the Python exception's text in
// `error` when torch refuses it.
Result<PyRef> tensor_to_python(const at::Tensor& tensor);

// `object`'s tensor sharing its memory. `what` names the object in errors ("the output of
// ModelNew.forward"). Refused: anything but an instance of exactly torch.Tensor (a subclass can
// defer its work or lie about its values through __torch_function__) or a layout other than
// dense, and a tensor whose elements overlap in memory (an expanded, stride-0 view): such a
// tensor is no answer the harness can read element by element. When refused for either,
// `failed_check` (if given) names the check it fails: "output_type" or "output_overlaps".
Result<at::Tensor> tensor_from_python(PyObject* object, const std::string& what, std::string* failed_check = nullptr);

// Whether `object` is a torch.Tensor (or a subclass of it).
bool is_python_tensor(PyObject* object);

// A model's plain (non-tensor) argument of forward: its position and its value.
using ForwardConstant = std::pair<size_t, PyRef>;

// The arguments of one forward call: `tensors` in order, with `constants` (sorted by position)
// at their positions; invalid_argument when the counts do not fit together.
Result<PyRef> forward_arguments(const std::vector<at::Tensor>& tensors, const std::vector<ForwardConstant>& constants);

}  // namespace drk::evaluator
