#include <Python.h>

#include "actors/evaluator/python/python_reference.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <stdexcept>

#include "actors/evaluator/python/python_tensors.h"

namespace drk::evaluator {
namespace {

Result<std::string> to_json(PyObject* value) {
  PyRef json(PyImport_ImportModule("json"));
  PyRef text(json ? PyObject_CallMethod(json.get(), "dumps", "O", value) : nullptr);
  if (!text) return make_error(Errc::unsupported, python_error_text());
  return std::string(PyUnicode_AsUTF8(text.get()));
}

// A copy of `model` in float64, or none (the exception cleared) when it cannot be copied.
PyRef float64_copy(PyObject* model) {
  PyRef copy_module(PyImport_ImportModule("copy"));
  PyRef copy(copy_module ? PyObject_CallMethod(copy_module.get(), "deepcopy", "O", model) : nullptr);
  PyRef wide(copy ? PyObject_CallMethod(copy.get(), "double", nullptr) : nullptr);
  if (!wide) PyErr_Clear();
  return wide;
}

// get_inputs() with torch's factory functions making their tensors on the CUDA device: torch.rand
// of KernelBench's published shapes (gigabytes) takes seconds on the host and a millisecond there.
constexpr const char* kDrawOnDevice = R"(import torch

def draw(get_inputs):
    device = torch.device("cuda")
    if not hasattr(device, "__enter__"):
        return get_inputs()
    with device:
        return get_inputs()
)";

bool any_float64(const std::vector<at::Tensor>& tensors) {
  for (const auto& tensor : tensors)
    if (tensor.scalar_type() == at::kDouble) return true;
  return false;
}

}  // namespace

Result<std::unique_ptr<PythonReference>> PythonReference::create(const std::string& source,
                                                                 const std::string& display_name,
                                                                 kernels::DeviceKind device, uint64_t init_seed) {
  auto generators = hold_torch_generators();
  PythonLock lock;
  std::unique_ptr<PythonReference> reference(new PythonReference());
  reference->display_name_ = display_name;
  reference->source_ = source;
  reference->init_seed_ = init_seed;
  reference->on_cuda_ = device == kernels::DeviceKind::cuda;
  auto stage_failed = [&](const std::string& stage, const std::string& why) {
    return make_error(Errc::invalid_argument, "the reference of " + display_name + " cannot run: " + stage + ": " + why);
  };
  auto module = run_module(source, "reference_problem", display_name);
  if (!module) return stage_failed("load", module.error().message);
  reference->module_ = std::move(*module);
  PyObject* globals = PyModule_GetDict(reference->module_.get());
  PyObject* model_class = PyDict_GetItemString(globals, "Model");
  PyObject* get_init_inputs = PyDict_GetItemString(globals, "get_init_inputs");
  if (!model_class || !get_init_inputs || !PyDict_GetItemString(globals, "get_inputs"))
    return stage_failed("load", "a KernelBench problem defines Model, get_inputs() and get_init_inputs()");
  if (auto seeded = seed_torch(init_seed); !seeded) return seeded.error();
  PyRef init(PyObject_CallNoArgs(get_init_inputs));
  if (!init) return stage_failed("get_init_inputs", python_error_text(display_name));
  PyRef init_args(PySequence_Tuple(init.get()));
  if (!init_args) return stage_failed("get_init_inputs", "it returned no list: " + python_error_text());
  auto init_json = to_json(init.get());
  if (!init_json)
    return make_error(Errc::unsupported, "the init inputs of " + display_name +
                                             " are not plain values (numbers, lists): a sandbox cannot be given them (" +
                                             init_json.error().message + ")");
  reference->init_inputs_json_ = *init_json;
  if (reference->on_cuda_) {
    auto helper = run_module(kDrawOnDevice, "drk_draw_on_device", "drk_draw_on_device.py");
    if (!helper) return helper.error();
    reference->draw_on_device_ = PyRef::borrow(PyDict_GetItemString(PyModule_GetDict(helper->get()), "draw"));
  }
  if (auto seeded = seed_torch(init_seed); !seeded) return seeded.error();
  c10::NoGradGuard no_grad;
  PyRef model(PyObject_Call(model_class, init_args.get(), nullptr));
  if (!model) return stage_failed("construct", python_error_text(display_name));
  if (reference->on_cuda_) {
    model = PyRef(PyObject_CallMethod(model.get(), "cuda", nullptr));
    if (!model) return stage_failed("construct", python_error_text(display_name));
  }
  auto parameters = parameter_summary(model.get());
  if (!parameters) return stage_failed("construct", parameters.error().message);
  reference->parameters_json_ = *parameters;
  reference->model_float64_ = float64_copy(model.get());
  reference->model_ = std::move(model);

  // One draw finds the constants (every value of get_inputs() that is not a tensor).
  PyRef inputs = reference->call_get_inputs();
  if (!inputs) return stage_failed("get_inputs", python_error_text(display_name));
  PyRef values(PySequence_List(inputs.get()));
  if (!values) return stage_failed("get_inputs", "it returned no list");
  reference->argument_count_ = static_cast<size_t>(PyList_Size(values.get()));
  PyRef constants(PyList_New(0));
  for (size_t i = 0; i < reference->argument_count_; ++i) {
    PyObject* value = PyList_GetItem(values.get(), static_cast<Py_ssize_t>(i));  // borrowed
    if (is_python_tensor(value)) continue;
    reference->constants_.emplace_back(i, PyRef::borrow(value));
    PyRef pair(Py_BuildValue("[nO]", static_cast<Py_ssize_t>(i), value));
    PyList_Append(constants.get(), pair.get());
  }
  auto constants_json = to_json(constants.get());
  if (!constants_json)
    return make_error(Errc::unsupported, "get_inputs() of " + display_name +
                                             " returns values that are neither tensors nor plain values: " +
                                             constants_json.error().message);
  reference->constants_json_ = *constants_json;
  auto drawn = reference->draw_tensors(init_seed);
  if (!drawn) return stage_failed("get_inputs", drawn.error().message);
  std::vector<at::Tensor> on_device;
  for (const auto& tensor : *drawn) on_device.push_back(reference->on_cuda_ ? tensor.to(at::kCUDA) : tensor);
  if (auto output = reference->run(on_device); !output) return stage_failed("forward", output.error().message);
  return reference;
}

PythonReference::~PythonReference() {
  PythonLock lock;
  constants_.clear();
  model_ = PyRef();
  model_float64_ = PyRef();
  draw_on_device_ = PyRef();
  module_ = PyRef();
}

PyRef PythonReference::call_get_inputs() const {
  PyObject* get_inputs = PyDict_GetItemString(PyModule_GetDict(module_.get()), "get_inputs");
  if (draw_on_device_) return PyRef(PyObject_CallFunctionObjArgs(draw_on_device_.get(), get_inputs, nullptr));
  return PyRef(PyObject_CallNoArgs(get_inputs));
}

Result<std::vector<at::Tensor>> PythonReference::draw_tensors(uint64_t seed) const {
  if (auto seeded = seed_torch(seed); !seeded) return seeded.error();
  PyRef inputs = call_get_inputs();
  if (!inputs) return make_error(Errc::invalid_argument, python_error_text(display_name_));
  PyRef values(PySequence_List(inputs.get()));
  if (!values || static_cast<size_t>(PyList_Size(values.get())) != argument_count_)
    return make_error(Errc::invalid_argument, "get_inputs() returned another number of values than before");
  std::vector<at::Tensor> tensors;
  for (size_t i = 0; i < argument_count_; ++i) {
    PyObject* value = PyList_GetItem(values.get(), static_cast<Py_ssize_t>(i));
    if (!is_python_tensor(value)) continue;
    auto tensor = tensor_from_python(value, "value " + std::to_string(i + 1) + " of get_inputs()");
    if (!tensor) return tensor.error();
    // Dense, as the harness lays inputs out; where they were drawn.
    tensors.push_back(tensor->contiguous());
  }
  return tensors;
}

Result<at::Tensor> PythonReference::run(const std::vector<at::Tensor>& inputs) const {
  PythonLock lock;
  c10::NoGradGuard no_grad;
  if (inputs.size() + constants_.size() != argument_count_)
    return make_error(Errc::invalid_argument, "the reference of " + display_name_ + " takes " +
                                                  std::to_string(argument_count_ - constants_.size()) + " tensors");
  auto args = forward_arguments(inputs, constants_);
  if (!args) return args.error();
  // Float64 inputs are the precision evidence's (reference_model.h): Model in float64 answers them.
  PyObject* model = any_float64(inputs) && model_float64_ ? model_float64_.get() : model_.get();
  PyRef result(PyObject_Call(model, args->get(), nullptr));
  if (!result) return make_error(Errc::invalid_argument, "Model.forward raised " + python_error_text(display_name_));
  return tensor_from_python(result.get(), "the output of Model.forward");
}

std::vector<at::Tensor> PythonReference::drawn(uint64_t seed) const {
  auto generators = hold_torch_generators();
  PythonLock lock;
  auto tensors = draw_tensors(seed);
  if (!tensors)
    throw std::runtime_error("get_inputs() of " + display_name_ + " failed after it ran: " + tensors.error().message);
  return std::move(*tensors);
}

std::vector<at::Tensor> PythonReference::draw(const kernels::Task&, kernels::DeviceKind, uint64_t seed) const {
  std::vector<at::Tensor> tensors = drawn(seed);
  for (auto& tensor : tensors) tensor = tensor.cpu();
  return tensors;
}

void PythonReference::draw_into(const kernels::Task&, kernels::DeviceKind, uint64_t seed,
                                const std::vector<at::Tensor>& places) const {
  const std::vector<at::Tensor> tensors = drawn(seed);
  for (size_t i = 0; i < places.size() && i < tensors.size(); ++i) places[i].copy_(tensors[i]);
}

}  // namespace drk::evaluator
