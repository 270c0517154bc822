#include "kernels/catalog/reference.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>

#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "kernels/catalog/float8.h"

// torch._scaled_mm (cuBLASLt's FP8 GEMM) with the signature it has had since 2.5.
#if (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)) && \
    __has_include(<ATen/ops/_scaled_mm.h>)
#define DRK_LIBTORCH_HAS_SCALED_MM 1
#endif

namespace drk::kernels {
namespace {

uint64_t mix_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A value of the expression: a number or a tensor.
struct Value {
  bool is_number = false;
  double number = 0.0;
  at::Tensor tensor;
};

// How an evaluation reads FP8 inputs (each a byte tensor followed by its scale): dequantised to
// `as` when the expression uses them, or, for a matrix product of two of them on a GPU, through
// LibTorch's FP8 GEMM unless it was refused before.
struct Float8Inputs {
  const std::vector<std::optional<DType>>* formats = nullptr;  // per input; nullopt: not FP8
  at::ScalarType as = at::kFloat;
  std::atomic<bool>* scaled_mm_refused = nullptr;
};

class Evaluator {
 public:
  Evaluator(const std::vector<std::string>& names, const std::vector<at::Tensor>& inputs, Float8Inputs float8 = {})
      : names_(names), inputs_(inputs), float8_(float8) {}

  Value eval(const Expression& e) const {
    using K = Expression::Kind;
    switch (e.kind) {
      case K::number: return number(e.number);
      case K::input: return tensor(input(index_of(e.name)));
      case K::negate: {
        Value v = eval(e.args[0]);
        return v.is_number ? number(-v.number) : tensor(-v.tensor);
      }
      case K::add:
      case K::subtract:
      case K::multiply:
      case K::divide: return binary(e.kind, eval(e.args[0]), eval(e.args[1]));
      case K::call: return call(e);
    }
    throw std::logic_error("unknown expression kind");
  }

 private:
  static Value number(double n) { return Value{true, n, {}}; }
  static Value tensor(at::Tensor t) { return Value{false, 0.0, std::move(t)}; }

  size_t index_of(const std::string& name) const {
    for (size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return i;
    throw std::logic_error("reference input '" + name + "' is not bound");
  }
  const std::optional<DType>& float8_format(size_t input) const {
    static const std::optional<DType> none;
    return float8_.formats ? (*float8_.formats)[input] : none;
  }
  // An input's value: an FP8 one decoded and multiplied by its scale (in float64 for the exact
  // reference, float32 otherwise, then rounded to the evaluation's dtype), once per evaluation.
  at::Tensor input(size_t i) const {
    const auto& format = float8_format(i);
    if (!format) return inputs_[i];
    if (auto known = dequantised_.find(i); known != dequantised_.end()) return known->second;
    const at::ScalarType wide = float8_.as == at::kDouble ? at::kDouble : at::kFloat;
    at::Tensor value = (float8_decode(inputs_[i], *format, wide) * inputs_[i + 1].to(wide)).to(float8_.as);
    dequantised_.emplace(i, value);
    return value;
  }

  // matmul(a, b) or linear(a, w[, bias]) of two FP8 inputs as a user of FP8 runs it on a GPU:
  // torch._scaled_mm on the bytes and their scales, bfloat16 out (nullopt where it does not apply
  // or LibTorch refused it once: the dequantised product then).
  std::optional<at::Tensor> scaled_matmul(const Expression& e) const {
#ifdef DRK_LIBTORCH_HAS_SCALED_MM
    using K = Expression::Kind;
    const bool linear = e.name == "linear";
    if ((e.name != "matmul" && !linear) || float8_.as != at::kBFloat16 || !float8_.scaled_mm_refused ||
        float8_.scaled_mm_refused->load(std::memory_order_relaxed) || e.args[0].kind != K::input ||
        e.args[1].kind != K::input)
      return std::nullopt;
    const size_t a = index_of(e.args[0].name), b = index_of(e.args[1].name);
    const auto &format_a = float8_format(a), &format_b = float8_format(b);
    if (!format_a || !format_b || !inputs_[a].is_cuda() || inputs_[a].dim() != 2 || inputs_[b].dim() != 2) return std::nullopt;
    // cuBLASLt's FP8 GEMM takes sizes in multiples of 16 only (a second shape's 4099 is not).
    for (const at::Tensor* operand : {&inputs_[a], &inputs_[b]})
      for (int64_t size : operand->sizes())
        if (size % 16 != 0) return std::nullopt;
    auto as_float8 = [](const at::Tensor& bytes, DType format) {
      return bytes.view(format == DType::float8_e4m3fn ? at::ScalarType::Float8_e4m3fn : at::ScalarType::Float8_e5m2);
    };
    try {
      const at::Tensor left = as_float8(inputs_[a], *format_a);
      // cuBLASLt takes the right operand column-major: a linear's weight [N, K] is, transposed; a
      // matmul's [K, N] is made so, as its user must.
      const at::Tensor right = linear ? as_float8(inputs_[b], *format_b).t()
                                      : as_float8(inputs_[b].t().contiguous(), *format_b).t();
      std::optional<at::Tensor> bias;
      if (linear && e.args.size() > 2) bias = eval(e.args[2]).tensor;
      return at::_scaled_mm(left, right, inputs_[a + 1], inputs_[b + 1], bias, std::nullopt, at::kBFloat16);
    } catch (const c10::Error&) {
      // e5m2 x e5m2: cuBLASLt has no kernel for it.
      float8_.scaled_mm_refused->store(true, std::memory_order_relaxed);
      return std::nullopt;
    }
#else
    (void)e;
    return std::nullopt;
#endif
  }

  static Value binary(Expression::Kind kind, const Value& a, const Value& b) {
    using K = Expression::Kind;
    if (a.is_number && b.is_number) {
      switch (kind) {
        case K::add: return number(a.number + b.number);
        case K::subtract: return number(a.number - b.number);
        case K::multiply: return number(a.number * b.number);
        default: return number(a.number / b.number);
      }
    }
    if (a.is_number) {
      at::Scalar s(a.number);
      switch (kind) {
        case K::add: return tensor(s + b.tensor);
        case K::subtract: return tensor(s - b.tensor);
        case K::multiply: return tensor(s * b.tensor);
        default: return tensor(s / b.tensor);
      }
    }
    if (b.is_number) {
      at::Scalar s(b.number);
      switch (kind) {
        case K::add: return tensor(a.tensor + s);
        case K::subtract: return tensor(a.tensor - s);
        case K::multiply: return tensor(a.tensor * s);
        default: return tensor(a.tensor / s);
      }
    }
    switch (kind) {
      case K::add: return tensor(a.tensor + b.tensor);
      case K::subtract: return tensor(a.tensor - b.tensor);
      case K::multiply: return tensor(a.tensor * b.tensor);
      default: return tensor(a.tensor / b.tensor);
    }
  }

  Value call(const Expression& e) const {
    if (auto product = scaled_matmul(e)) return tensor(std::move(*product));
    std::vector<Value> args;
    for (const auto& arg : e.args) args.push_back(eval(arg));
    const std::string& f = e.name;
    const at::Tensor& x = args[0].tensor;
    auto num = [&](size_t i) { return args[i].number; };
    auto dim = [&](size_t i) { return static_cast<int64_t>(args[i].number); };
    if (f == "relu") return tensor(at::relu(x));
    if (f == "gelu") return tensor(at::gelu(x));
    if (f == "sigmoid") return tensor(at::sigmoid(x));
    if (f == "tanh") return tensor(at::tanh(x));
    if (f == "exp") return tensor(at::exp(x));
    if (f == "log") return tensor(at::log(x));
    if (f == "sqrt") return tensor(at::sqrt(x));
    if (f == "abs") return tensor(at::abs(x));
    if (f == "softplus") return tensor(at::softplus(x));
    if (f == "hardswish") return tensor(at::hardswish(x));
    if (f == "leaky_relu") return tensor(at::leaky_relu(x, at::Scalar(num(1))));
    if (f == "elu") return tensor(at::elu(x, at::Scalar(num(1))));
    if (f == "softmax") return tensor(at::softmax(x, dim(1)));
    if (f == "log_softmax") return tensor(at::log_softmax(x, dim(1)));
    if (f == "rms_norm") {
      std::vector<int64_t> dims{dim(1)};
      at::Tensor mean_square = (x * x).mean(at::IntArrayRef(dims), /*keepdim=*/true);
      return tensor(x / at::sqrt(mean_square + num(2)));
    }
    if (f == "layer_norm") {
      int64_t ndims = dim(3);
      std::vector<int64_t> normalized(x.sizes().end() - ndims, x.sizes().end());
      return tensor(at::layer_norm(x, normalized, args[1].tensor, args[2].tensor, num(4)));
    }
    if (f == "matmul") return tensor(at::matmul(x, args[1].tensor));
    if (f == "linear") {
      if (args.size() > 2) return tensor(at::linear(x, args[1].tensor, args[2].tensor));
      return tensor(at::linear(x, args[1].tensor));
    }
    if (f == "conv2d") {
      if (args.size() > 2) return tensor(at::conv2d(x, args[1].tensor, args[2].tensor));
      return tensor(at::conv2d(x, args[1].tensor));
    }
    if (f == "sum" || f == "mean") {
      std::vector<int64_t> dims{dim(1)};
      bool keepdim = args.size() > 2 && num(2) != 0.0;
      return tensor(f == "sum" ? x.sum(at::IntArrayRef(dims), keepdim) : x.mean(at::IntArrayRef(dims), keepdim));
    }
    if (f == "max") return tensor(std::get<0>(x.max(dim(1), args.size() > 2 && num(2) != 0.0)));
    if (f == "cross_entropy") return tensor(at::cross_entropy_loss(x, args[1].tensor));
    if (f == "scaled_dot_product_attention") {
      // The math of torch.nn.functional.scaled_dot_product_attention (no mask, no dropout), which
      // LibTorch 1.13 lacks: softmax(q k^T / sqrt(E)) v.
      const at::Tensor& k = args[1].tensor;
      double scale = 1.0 / std::sqrt(static_cast<double>(x.size(-1)));
      at::Tensor scores = at::matmul(x, k.transpose(-2, -1)) * scale;
      return tensor(at::matmul(at::softmax(scores, -1), args[2].tensor));
    }
    if (f == "clamp") return tensor(at::clamp(x, at::Scalar(num(1)), at::Scalar(num(2))));
    throw std::logic_error("reference function '" + f + "' has no LibTorch evaluation");
  }

  const std::vector<std::string>& names_;
  const std::vector<at::Tensor>& inputs_;
  Float8Inputs float8_;
  mutable std::map<size_t, at::Tensor> dequantised_;
};

}  // namespace

Result<Reference> Reference::create(const Task& task) {
  Reference reference;
  for (const auto& input : task.inputs) reference.input_names_.push_back(input.name);
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const InputSpec& input = task.inputs[i];
    if (!is_float8(input.dtype)) {
      reference.float8_formats_.emplace_back();
      continue;
    }
    if (i + 1 == task.inputs.size() || task.inputs[i + 1].dtype != DType::float32)
      return make_error(Errc::invalid_argument, "task '" + task.name + "': FP8 input '" + input.name +
                                                    "' is not followed by its float32 scale (kernels/abi/drk_kernel.h)");
    reference.float8_formats_.emplace_back(input.dtype);
  }
  auto expression = parse_expression(task.reference, reference.input_names_);
  if (!expression)
    return make_error(Errc::parse_error, "task '" + task.name + "': the reference " + expression.error().message);
  reference.expression_ = std::move(*expression);
  return reference;
}

Result<at::Tensor> Reference::run(const std::vector<at::Tensor>& inputs) const {
  if (inputs.size() != input_names_.size())
    return make_error(Errc::invalid_argument, "the reference takes " + std::to_string(input_names_.size()) +
                                                  " inputs, got " + std::to_string(inputs.size()));
  std::optional<at::ScalarType> narrow;
  for (const auto& input : inputs)
    if (input.is_cpu() && (input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16))
      narrow = input.scalar_type();
  // FP8 inputs are dequantised to float64 where their scales are (the exact reference), else to
  // the FP8 variant's output dtype, in which the operators then run.
  at::ScalarType float8_as = at::kFloat;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!float8_formats_[i]) continue;
    float8_as = inputs[i + 1].scalar_type() == at::kDouble ? at::kDouble : at::kBFloat16;
    if (float8_as == at::kBFloat16 && inputs[i].is_cpu()) narrow = at::kBFloat16;
  }
  if (!narrow) return evaluate(inputs, float8_as);
  if (!widens_16bit()) {
    auto native = evaluate(inputs, float8_as);
    // LibTorch 1.13 raises a plain c10::Error for a dtype an operator lacks, whose message
    // (AT_DISPATCH's: `"relu" not implemented for 'Half'`) is the only sign of it.
    if (native || native.error().message.find("not implemented for") == std::string::npos) return native;
    widen_16bit_->store(true, std::memory_order_relaxed);
  }
  std::vector<at::Tensor> wide;
  for (const auto& input : inputs) wide.push_back(input.is_floating_point() ? input.to(at::kFloat) : input);
  auto result = evaluate(wide, at::kFloat);
  if (!result) return result;
  return result->to(*narrow);
}

Result<at::Tensor> Reference::evaluate(const std::vector<at::Tensor>& inputs, at::ScalarType float8_as) const {
  try {
    Value value = Evaluator(input_names_, inputs, Float8Inputs{&float8_formats_, float8_as, scaled_mm_refused_.get()})
                      .eval(expression_);
    if (value.is_number) return make_error(Errc::invalid_argument, "the reference is a constant");
    return value.tensor.contiguous();
  } catch (const c10::Error& e) {
    return make_error(Errc::invalid_argument, std::string("LibTorch refused the reference: ") + e.what_without_backtrace());
  }
}

at::ScalarType scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::float32: return at::kFloat;
    case DType::float16: return at::kHalf;
    case DType::bfloat16: return at::kBFloat16;
    case DType::float64: return at::kDouble;
    case DType::int32: return at::kInt;
    case DType::int64: return at::kLong;
    case DType::float8_e4m3fn:
    case DType::float8_e5m2: return at::kByte;  // FP8 bytes (kernels/catalog/float8.h)
  }
  return at::kFloat;
}

void draw_inputs_into(const Task& task, DeviceKind device, uint64_t seed, const std::vector<at::Tensor>& tensors) {
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const InputSpec& input = task.inputs[i];
    const at::Tensor& t = tensors.at(i);
    // A generator of the tensor's device seeded for this input alone: the CPU's, or a clone of the
    // device's default one (its state is shared by the whole process).
    at::Generator generator;
    if (t.device().is_cpu()) {
      generator = at::detail::createCPUGenerator(mix_seed(seed, i));
    } else {
      at::Generator shared = at::globalContext().defaultGenerator(t.device());
      {
        std::lock_guard<std::mutex> lock(shared.mutex());
        generator = shared.clone();
      }
      generator.set_current_seed(mix_seed(seed, i));
    }
    if (input.draw.kind == "classes") {
      t.random_(0, class_count(task, input, device), generator);
      continue;
    }
    if (input.draw.kind == "scale") continue;  // written with the FP8 input before it
    // Narrower floats are drawn in float32 and rounded: the same values on every LibTorch (1.13's
    // CPU has no float16 normal_) and on every device kind of the same generator.
    at::Tensor target = t.scalar_type() == at::kFloat ? t : at::empty(t.sizes(), t.options().dtype(at::kFloat));
    if (input.draw.kind == "normal") target.normal_(input.draw.mean, input.draw.stddev, generator);
    else target.uniform_(input.draw.low, input.draw.high, generator);
    if (is_float8(input.dtype)) float8_quantise_into(target, input.dtype, t, tensors.at(i + 1));
    else if (!target.is_same(t)) t.copy_(target);
  }
}

std::vector<at::Tensor> draw_inputs(const Task& task, DeviceKind device, uint64_t seed) {
  std::vector<at::Tensor> tensors;
  const auto& shapes = task.shapes(device);
  for (const auto& input : task.inputs)
    tensors.push_back(at::empty(shapes.at(input.name), at::TensorOptions().dtype(scalar_type_of(input.dtype))));
  draw_inputs_into(task, device, seed, tensors);
  return tensors;
}

}  // namespace drk::kernels
