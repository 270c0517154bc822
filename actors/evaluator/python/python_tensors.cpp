#include <Python.h>

#include "actors/evaluator/python/python_tensors.h"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

namespace drk::evaluator {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// A capsule that was never consumed still owns its DLManagedTensor.
void delete_unused_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed && managed->deleter) managed->deleter(managed);
}

PyObject* torch_module() {
  static PyObject* torch = PyImport_ImportModule("torch");  // kept for the process's life
  return torch;
}

// Whether two elements of `tensor` share an address: some dimension of more than one element
// whose stride is 0, or strides that let rows overlap (checked on the sorted strides).
bool elements_overlap(const at::Tensor& tensor) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims with more than one element
  for (int64_t d = 0; d < tensor.dim(); ++d)
    if (tensor.size(d) > 1) dims.emplace_back(tensor.stride(d), tensor.size(d));
  std::sort(dims.begin(), dims.end());
  int64_t span = 1;  // elements covered by the dims so far, as a dense block would be
  for (const auto& [stride, size] : dims) {
    if (stride < span) return true;
    span = stride * size;
  }
  return false;
}

}  // namespace

Result<PyRef> tensor_to_python(const at::Tensor& tensor) {
  DLManagedTensor* managed = at::toDLPack(tensor);
  PyRef capsule(PyCapsule_New(managed, kCapsuleName, delete_unused_capsule));
  if (!capsule) {
    managed->deleter(managed);
    return make_error(Errc::internal, python_error_text());
  }
  PyObject* torch = torch_module();
  if (!torch) return make_error(Errc::unsupported, "cannot import torch: " + python_error_text());
  PyRef dlpack(PyObject_GetAttrString(torch, "utils"));
  PyRef module(dlpack ? PyObject_GetAttrString(dlpack.get(), "dlpack") : nullptr);
  PyRef result(module ? PyObject_CallMethod(module.get(), "from_dlpack", "O", capsule.get()) : nullptr);
  if (!result) return make_error(Errc::internal, "torch.utils.dlpack.from_dlpack: " + python_error_text());
  return result;
}

Result<at::Tensor> tensor_from_python(PyObject* object, const std::string& what, std::string* failed_check) {
  auto refuse = [&](const char* check, std::string why) {
    if (failed_check) *failed_check = check;
    return make_error(Errc::invalid_argument, std::move(why));
  };
  PyObject* torch = torch_module();
  if (!torch) return make_error(Errc::unsupported, "cannot import torch: " + python_error_text());
  PyRef tensor_type(PyObject_GetAttrString(torch, "Tensor"));
  if (!object || Py_TYPE(object) != reinterpret_cast<PyTypeObject*>(tensor_type.get())) {
    const std::string type = object ? Py_TYPE(object)->tp_name : "nothing";
    return refuse("output_type", what + " is a " + type +
                                     ", not a torch.Tensor (a subclass or another object is no answer the harness "
                                     "reads: return a plain tensor)");
  }
  PyRef layout(PyObject_GetAttrString(object, "layout"));
  PyRef strided(PyObject_GetAttrString(torch, "strided"));
  if (layout.get() != strided.get())
    return refuse("output_type", what + " is not a dense (strided) tensor");
  // A tensor that requires grad cannot be exported: its values are what is judged, as KernelBench
  // compares them, so the export takes them without the graph.
  PyRef detached(PyObject_CallMethod(object, "detach", nullptr));
  PyRef capsule(detached ? PyObject_CallMethod(detached.get(), "__dlpack__", nullptr) : nullptr);
  if (!capsule) return make_error(Errc::invalid_argument, what + " cannot be read: " + python_error_text());
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.get(), kCapsuleName));
  if (!managed) return make_error(Errc::invalid_argument, what + " cannot be read: " + python_error_text());
  PyCapsule_SetName(capsule.get(), kUsedCapsuleName);
  at::Tensor tensor = at::fromDLPack(managed);
  if (elements_overlap(tensor))
    return refuse("output_overlaps", what + " has elements that share memory (an expanded or stride-0 view): return "
                                            "a tensor with one element per position");
  return tensor;
}

bool is_python_tensor(PyObject* object) {
  PyObject* torch = torch_module();
  PyRef tensor_type(torch ? PyObject_GetAttrString(torch, "Tensor") : nullptr);
  return tensor_type && PyObject_IsInstance(object, tensor_type.get()) == 1;
}

Result<PyRef> forward_arguments(const std::vector<at::Tensor>& tensors, const std::vector<ForwardConstant>& constants) {
  const size_t count = tensors.size() + constants.size();
  PyRef args(PyTuple_New(static_cast<Py_ssize_t>(count)));
  size_t next_tensor = 0, next_constant = 0;
  for (size_t position = 0; position < count; ++position) {
    PyRef value;
    if (next_constant < constants.size() && constants[next_constant].first == position) {
      value = PyRef::borrow(constants[next_constant++].second.get());
    } else if (next_tensor < tensors.size()) {
      auto wrapped = tensor_to_python(tensors[next_tensor++]);
      if (!wrapped) return wrapped.error();
      value = std::move(*wrapped);
    } else {
      return make_error(Errc::invalid_argument, "forward takes its plain values at positions the " +
                                                    std::to_string(tensors.size()) + " tensors do not reach");
    }
    PyTuple_SET_ITEM(args.get(), static_cast<Py_ssize_t>(position), value.release());  // steals
  }
  return args;
}

}  // namespace drk::evaluator
