#include <Python.h>

#include "actors/evaluator/python/python_candidate.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "actors/evaluator/python/harness_access_watch.h"
#include "actors/evaluator/python/process_refusal.h"
#include "actors/evaluator/python/harness_functions.h"
#include "actors/evaluator/python/python_runtime.h"
#include "actors/evaluator/python/python_tensors.h"
#include "kernels/catalog/reference.h"

namespace drk::evaluator {
namespace {

// A model built from a file in this sandbox: the candidate's ModelNew, or on CUDA the problem's
// Model, the timing reference beside it.
struct LoadedModel {
  PyRef module;
  PyRef model;
  std::string file;
  at::Tensor kept;  // the last timed call's answer (the reference's: every call's)
};

struct LoadedCandidate {
  LoadedModel model_new;
  LoadedModel reference;
  std::vector<ForwardConstant> constants;
  std::optional<HarnessFunctions> harness_functions;  // as they were before the candidate's file ran
  bool on_cuda = false;
  bool keep_outputs = false;
  std::string error;
  std::string failed_check;  // the check a refused call failed; "" when it failed otherwise
  // CUDA: torch's current stream is the harness's stream of the call (drk_context.stream), set
  // before every call so that a candidate that changed it for itself cannot move later calls'
  // work out of the timed events.
  PyRef set_stream;    // torch.cuda.set_stream
  PyRef bound_stream;  // torch.cuda.ExternalStream over bound_stream_address
  void* bound_stream_address = nullptr;
};

LoadedCandidate candidate;

at::Tensor tensor_of(const drk_tensor& descriptor) {
  std::vector<int64_t> shape(descriptor.shape, descriptor.shape + descriptor.ndim);
  std::vector<int64_t> strides(descriptor.strides, descriptor.strides + descriptor.ndim);
  auto options = at::TensorOptions().dtype(kernels::scalar_type_of(static_cast<kernels::DType>(descriptor.dtype)));
  if (candidate.on_cuda) options = options.device(at::kCUDA, 0);
  return at::from_blob(descriptor.data, shape, strides, options);
}

std::string shape_text(at::IntArrayRef shape) {
  std::ostringstream text;
  text << "[";
  for (size_t d = 0; d < shape.size(); ++d) text << (d ? ", " : "") << shape[d];
  text << "]";
  return text.str();
}

// Whether `answer`'s memory overlaps `input`'s.
bool shares_memory(const at::Tensor& answer, const at::Tensor& input) {
  if (answer.device() != input.device() || answer.numel() == 0 || input.numel() == 0) return false;
  const auto* a = static_cast<const char*>(answer.storage().data());
  const auto* b = static_cast<const char*>(input.data_ptr());
  const size_t a_bytes = answer.storage().nbytes();
  const size_t b_bytes = static_cast<size_t>(input.numel()) * input.element_size();
  return a < b + b_bytes && b < a + a_bytes;
}

int fail(std::string why, std::string failed_check = "") {
  candidate.error = std::move(why);
  candidate.failed_check = std::move(failed_check);
  return DRK_E_INTERNAL;
}

// Makes the call's stream torch's current one (CUDA); false, with the error set, when it cannot.
bool bind_stream(const drk_context* context) {
  if (!candidate.on_cuda) return true;
  if (!candidate.bound_stream || candidate.bound_stream_address != context->stream) {
    PyRef cuda(PyImport_ImportModule("torch.cuda"));
    PyRef external(cuda ? PyObject_GetAttrString(cuda.get(), "ExternalStream") : nullptr);
    candidate.set_stream = PyRef(cuda ? PyObject_GetAttrString(cuda.get(), "set_stream") : nullptr);
    PyRef address(PyLong_FromVoidPtr(context->stream));
    candidate.bound_stream = PyRef(external && candidate.set_stream && address
                                       ? PyObject_CallOneArg(external.get(), address.get())
                                       : nullptr);
    if (!candidate.bound_stream) {
      candidate.error = "torch cannot use the harness's CUDA stream: " + python_error_text();
      return false;
    }
    candidate.bound_stream_address = context->stream;
  }
  PyRef set(PyObject_CallOneArg(candidate.set_stream.get(), candidate.bound_stream.get()));
  if (!set) candidate.error = "torch.cuda.set_stream raised " + python_error_text();
  return static_cast<bool>(set);
}

// `model` called on the harness's tensors (with the problem's constants at their positions);
// nullptr with the error set when it raises. With `harness_access`, the call is watched
// (harness_access_watch.h) and what it reached of the harness's is written there.
PyRef call_forward(const LoadedModel& model, const char* what, const drk_context* context, const drk_tensor* inputs,
                   int32_t num_inputs, std::vector<at::Tensor>& input_tensors, std::string* harness_access = nullptr) {
  if (!bind_stream(context)) return PyRef();
  for (int32_t i = 0; i < num_inputs; ++i) input_tensors.push_back(tensor_of(inputs[i]));
  auto args = forward_arguments(input_tensors, candidate.constants);
  if (!args) {
    candidate.error = args.error().message;
    return PyRef();
  }
  PyRef result;
  if (harness_access) {
    HarnessAccessWatch watch;
    result = PyRef(PyObject_Call(model.model.get(), args->get(), nullptr));
    *harness_access = watch.first_access();
  } else {
    result = PyRef(PyObject_Call(model.model.get(), args->get(), nullptr));
  }
  if (!result) candidate.error = std::string(what) + ".forward raised " + python_error_text(model.file);
  return result;
}

// The problem's Model as the timing reference: its answer is kept (until its next call), unchecked.
int call_reference(const drk_context* context, const drk_tensor* inputs, int32_t num_inputs, drk_tensor*, int32_t) {
  PythonLock lock;
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> input_tensors;
  candidate.reference.kept = at::Tensor();
  PyRef result = call_forward(candidate.reference, "Model", context, inputs, num_inputs, input_tensors);
  if (!result) return DRK_E_INTERNAL;
  auto answer = tensor_from_python(result.get(), "the output of Model.forward");
  if (!answer) return fail(answer.error().message);
  candidate.reference.kept = std::move(*answer);
  return DRK_OK;
}

int call_model(const drk_context* context, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
               int32_t num_outputs) {
  if (num_outputs != 1) return fail("a KernelBench model has one output; the request names " + std::to_string(num_outputs));
  PythonLock lock;
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> input_tensors;
  candidate.model_new.kept = at::Tensor();
  candidate.failed_check.clear();
  std::string harness_access;
  PyRef result =
      call_forward(candidate.model_new, "ModelNew", context, inputs, num_inputs, input_tensors, &harness_access);
  if (!harness_access.empty())
    return fail("ModelNew.forward reached " + harness_access + ", where the harness's values are", "harness_access");
  // Not while timing: the comparison would be in the timed call. The correctness calls come first.
  if (!candidate.keep_outputs)
    if (const std::string replaced = candidate.harness_functions->first_replaced(); !replaced.empty())
      return fail(replaced + " is no longer the function the harness had before the candidate's file ran: the "
                             "candidate replaced it (at load or in forward); leave the harness's functions as they are",
                  "harness_patched");
  if (!result) return DRK_E_INTERNAL;
  std::string failed_check;
  auto answer = tensor_from_python(result.get(), "the output of ModelNew.forward", &failed_check);
  if (!answer) return fail(answer.error().message, failed_check);
  at::Tensor expected = tensor_of(outputs[0]);
  if (answer->sizes() != expected.sizes())
    return fail("the output of ModelNew.forward has shape " + shape_text(answer->sizes()) + ", the reference's has " +
                shape_text(expected.sizes()));
  if (answer->scalar_type() != expected.scalar_type())
    return fail(std::string("the output of ModelNew.forward is ") + c10::toString(answer->scalar_type()) +
                ", the reference's is " + c10::toString(expected.scalar_type()));
  if (answer->device() != expected.device())
    return fail("the output of ModelNew.forward is on " + answer->device().str() + ", the inputs are on " +
                expected.device().str());
  for (size_t i = 0; i < input_tensors.size(); ++i)
    if (shares_memory(*answer, input_tensors[i]))
      return fail("the output of ModelNew.forward shares memory with input " + std::to_string(i + 1) +
                      ": an input (or a view of one) returned as the answer",
                  "output_aliases_input");
  if (candidate.keep_outputs) candidate.model_new.kept = std::move(*answer);
  else expected.copy_(*answer);
  return DRK_OK;
}

std::string parameters_text(const nlohmann::json& parameters) {
  std::string text;
  for (const auto& parameter : parameters) text += (text.empty() ? "" : ", ") + parameter[0].dump();
  return "(" + std::to_string(parameters.size()) + (text.empty() ? ")" : ": " + text + ")");
}

// "" when `candidate_json` (ModelNew's) matches `reference_json` (Model's), else what differs.
std::string parameters_differ(const std::string& reference_json, const std::string& candidate_json) {
  const auto reference = nlohmann::json::parse(reference_json, nullptr, false);
  const auto candidate = nlohmann::json::parse(candidate_json, nullptr, false);
  if (!reference.is_array() || !candidate.is_array()) return "the parameter lists cannot be read";
  const std::string fix =
      ": KernelBench gives ModelNew Model's initial weights only when it builds the same parameters in the same order "
      "(the same seed precedes both constructors)";
  if (reference.size() != candidate.size() || [&] {
        for (size_t i = 0; i < reference.size(); ++i)
          if (reference[i][0] != candidate[i][0]) return true;
        return false;
      }())
    return "ModelNew's parameters " + parameters_text(candidate) + " are not Model's " + parameters_text(reference) + fix;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double want = reference[i][1].get<double>(), got = candidate[i][1].get<double>();
    if (std::abs(want - got) > 1e-6 * std::max(1.0, std::abs(want)))
      return "ModelNew's parameter " + std::to_string(i + 1) + " " + candidate[i][0].dump() +
             " does not hold Model's initial values (sum " + std::to_string(got) + ", Model's " + std::to_string(want) +
             ")" + fix;
  }
  return "";
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::io_error, "cannot read the candidate file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `class_name` of `source` built as KernelBench builds it: the file run as module `module_name`,
// torch seeded, the class called with the init inputs without autograd, moved to the device.
// `parameters_json`: ModelNew's check against Model's ("": none).
Result<LoadedModel> build_model(const std::string& source, const char* module_name, const std::string& file,
                                const char* class_name, const PyRef& init_args, const PythonCandidateSpec& spec,
                                const std::string& parameters_json) {
  LoadedModel loaded;
  loaded.file = file;
  auto module = run_module(source, module_name, file);
  if (!module) return make_error(Errc::invalid_argument, file + " raised " + module.error().message);
  loaded.module = std::move(*module);
  PyRef model_class(PyObject_GetAttrString(loaded.module.get(), class_name));
  if (!model_class) {
    PyErr_Clear();
    return make_error(Errc::invalid_argument, file + " defines no " + class_name + ": a KernelBench " +
                                                  (std::string(class_name) == "Model" ? "problem" : "candidate") +
                                                  " defines class " + class_name + "(nn.Module)");
  }
  if (auto seeded = seed_torch(spec.init_seed); !seeded) return seeded.error();
  c10::NoGradGuard no_grad;
  PyRef model(PyObject_Call(model_class.get(), init_args.get(), nullptr));
  if (!model)
    return make_error(Errc::invalid_argument,
                      std::string(class_name) + "(*get_init_inputs()) raised " + python_error_text(file));
  if (!parameters_json.empty()) {
    auto parameters = parameter_summary(model.get());
    if (!parameters) return make_error(Errc::invalid_argument, std::string(class_name) + ": " + parameters.error().message);
    if (const std::string differs = parameters_differ(parameters_json, *parameters); !differs.empty())
      return make_error(Errc::invalid_argument, differs);
  }
  if (spec.on_cuda) {
    model = PyRef(PyObject_CallMethod(model.get(), "cuda", nullptr));
    if (!model) return make_error(Errc::invalid_argument, std::string(class_name) + ".cuda() raised " + python_error_text(file));
  }
  loaded.model = std::move(model);
  return loaded;
}

}  // namespace

Status load_python_candidate(const PythonCandidateSpec& spec) {
  auto source = read_text(spec.path);
  if (!source) return source.error();
  if (auto installed = install_prebuilt_extensions(spec.extensions); !installed) return installed;
  PythonLock lock;
  // Triton's cache is the sandbox's own triton-cache folder (triton_warm_up.h), its temporary
  // files under the sandbox's folder: where the warm-up's compilers may write, and the candidate's
  // sandbox finds what they wrote.
  if (auto placed = run_module("import os, tempfile\n"
                               "os.environ['TRITON_CACHE_DIR'] = os.path.join(os.getcwd(), 'triton-cache')\n"
                               "tempfile.tempdir = os.environ['TMPDIR'] = os.path.join(os.getcwd(), 'tmp')\n"
                               "try:\n    os.makedirs(tempfile.tempdir, exist_ok=True)\nexcept OSError:\n    pass\n",
                               "drk_candidate_folders", "the sandbox's load");
      !placed)
    return placed.error();
  candidate.on_cuda = spec.on_cuda;
  auto init_inputs = python_from_json(spec.init_inputs_json);
  if (!init_inputs) return init_inputs.error();
  PyRef init_args(PySequence_Tuple(init_inputs->get()));
  if (!init_args) return make_error(Errc::invalid_argument, "the init inputs are no list: " + python_error_text());
  auto constants = python_from_json(spec.constants_json);
  if (!constants) return constants.error();
  const Py_ssize_t count = PySequence_Size(constants->get());
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyRef entry(PySequence_GetItem(constants->get(), i));
    PyRef position(entry ? PySequence_GetItem(entry.get(), 0) : nullptr);
    PyRef value(entry ? PySequence_GetItem(entry.get(), 1) : nullptr);
    if (!position || !value) return make_error(Errc::invalid_argument, "a constant is no [position, value] pair");
    candidate.constants.emplace_back(PyLong_AsSize_t(position.get()), std::move(value));
  }
  // Before any of the candidate's code runs, so that what it does to torch cannot reach the
  // reference's construction.
  if (!spec.reference_source.empty()) {
    auto reference = build_model(spec.reference_source, "drk_problem", "problem.py", "Model", init_args, spec, "");
    if (!reference) return make_error(Errc::invalid_argument, "the problem's Model cannot be built beside the candidate: " +
                                                                  reference.error().message);
    candidate.reference = std::move(*reference);
  }
  install_harness_access_watch();
  install_process_refusal(!spec.processes_allowed);
  auto harness_functions = HarnessFunctions::snapshot();
  if (!harness_functions) return harness_functions.error();
  candidate.harness_functions = std::move(*harness_functions);
  auto model_new = build_model(*source, "model_new", spec.display_name, "ModelNew", init_args, spec,
                               spec.reference_parameters_json);
  if (!model_new) return model_new.error();
  candidate.model_new = std::move(*model_new);
  return {};
}

Status start_python_cuda() {
  PythonLock lock;
  auto started = run_module("import torch\nimport torch.utils.cpp_extension\ntorch.cuda.init()\n"
                            "torch.empty(1, device='cuda')\n", "drk_cuda_start",
                            "the sandbox's start");
  if (!started) return make_error(Errc::unsupported, "torch cannot use the CUDA device in the sandbox: " + started.error().message);
  // Triton asks ptxas its version for every kernel's cache key, `file` (through
  // platform.architecture()) for its launchers' keys and `ldconfig -p` for libcuda's folder, even
  // for what its cache holds: new processes. Asked here, before the filter, their answers are
  // kept (functools.lru_cache) for the candidate's calls. platform.architecture() keeps none of
  // its own and, refused its `file`, answers differently: its launcher keys would then miss the
  // cache the warm-up filled, so it is memoised too, in the warm-up and the candidate's sandbox.
  // Without Triton (or its ptxas) there is nothing to ask; a Triton candidate then fails in its
  // warm-up, which says why.
  (void)run_module(
      "import functools\nimport importlib.util\nimport platform\nimport torch\n"
      "platform.architecture = functools.lru_cache(maxsize=None)(platform.architecture)\n"
      "platform.architecture()\n"
      "if importlib.util.find_spec('triton') is not None:\n"
      "    try:\n"
      "        from triton.backends.compiler import GPUTarget\n"
      "        from triton.backends.nvidia.compiler import CUDABackend\n"
      "        major, minor = torch.cuda.get_device_capability()\n"
      "        CUDABackend(GPUTarget('cuda', major * 10 + minor, 32)).hash()\n"
      "    except Exception:\n"
      "        pass\n"
      "    try:\n"
      "        from triton.backends.nvidia import driver\n"
      "    except Exception:\n"
      "        driver = None\n"
      "    for probe in ('platform_key', 'libcuda_dirs', 'library_dirs'):\n"
      "        try:\n"
      "            getattr(driver, probe)()\n"
      "        except Exception:\n"
      "            pass\n",
      "drk_triton_start", "the sandbox's start");
  return {};
}

drk_kernel_fn python_candidate_kernel() { return &call_model; }
drk_kernel_fn python_reference_kernel() { return candidate.reference.model ? &call_reference : nullptr; }
const std::string& python_candidate_error() { return candidate.error; }
const std::string& python_candidate_failed_check() { return candidate.failed_check; }
void set_keep_python_outputs(bool keep) { candidate.keep_outputs = keep; }

}  // namespace drk::evaluator
