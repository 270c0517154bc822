#include "kernels/catalog/task_generator.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>

namespace drk::kernels {
namespace {

// A pointwise operation, written twice: in the reference language ("{}" stands for the operand)
// and as the C stage of the renderers (a float expression of `v`). Each stage is the one a ported
// task uses for the same operation, so the rendered kernels agree with LibTorch's.
struct PointwiseOp {
  const char* slug;       // for names: "mul2"
  const char* kind;       // two ops of a kind never share a chain (mul2 then mul3 is one op)
  const char* label;      // for titles: "* 2"
  const char* reference;  // "{} * 2.0"
  const char* stage;      // "v * 2.0f"
  bool arithmetic;        // the reference is an operator expression: it needs parentheses as an operand
  bool nonnegative;       // its value is never negative
  bool identity_on_nonnegative;  // applied to a nonnegative value it changes nothing (relu, abs)
  bool keeps_sign;        // a nonnegative operand stays nonnegative
};

constexpr PointwiseOp kPointwiseOps[] = {
    {"relu", "relu", "relu", "relu({})", "v > 0.0f ? v : 0.0f", false, true, true, true},
    {"leaky001", "leaky", "leaky_relu 0.01", "leaky_relu({}, 0.01)", "v > 0.0f ? v : 0.01f * v", false, false, true, true},
    {"leaky02", "leaky", "leaky_relu 0.2", "leaky_relu({}, 0.2)", "v > 0.0f ? v : 0.2f * v", false, false, true, true},
    {"gelu", "gelu", "gelu", "gelu({})", "0.5f * v * (1.0f + erff(v * 0.70710678f))", false, false, false, true},
    {"sigmoid", "sigmoid", "sigmoid", "sigmoid({})", "1.0f / (1.0f + expf(-v))", false, true, false, true},
    {"tanh", "tanh", "tanh", "tanh({})", "tanhf(v)", false, false, false, true},
    {"swish", "swish", "swish", "{} * sigmoid({})", "v / (1.0f + expf(-v))", true, false, false, true},
    {"softplus", "softplus", "softplus", "softplus({})", "v > 20.0f ? v : log1pf(expf(v))", false, true, false, true},
    {"elu", "elu", "elu", "elu({}, 1.0)", "v > 0.0f ? v : expm1f(v)", false, false, true, true},
    {"hardtanh", "clamp", "hardtanh", "clamp({}, -1.0, 1.0)", "v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v)", false, false, false, true},
    {"relu6", "clamp", "relu6", "clamp({}, 0.0, 6.0)", "fminf(fmaxf(v, 0.0f), 6.0f)", false, true, false, true},
    {"hardswish", "hardswish", "hardswish", "hardswish({})", "v * fminf(fmaxf((v + 3.0f) / 6.0f, 0.0f), 1.0f)", false, false, false, true},
    {"abs", "relu", "abs", "abs({})", "fabsf(v)", false, true, true, true},
    {"mul05", "mul", "* 0.5", "{} * 0.5", "v * 0.5f", true, false, false, true},
    {"mul2", "mul", "* 2", "{} * 2.0", "v * 2.0f", true, false, false, true},
    {"mul3", "mul", "* 3", "{} * 3.0", "v * 3.0f", true, false, false, true},
    {"add05", "add", "+ 0.5", "{} + 0.5", "v + 0.5f", true, false, false, true},
    {"add1", "add", "+ 1", "{} + 1.0", "v + 1.0f", true, false, false, true},
    {"sub05", "add", "- 0.5", "{} - 0.5", "v - 0.5f", true, false, false, false},
    {"div2", "mul", "/ 2", "{} / 2.0", "v / 2.0f", true, false, false, true},
    {"div4", "mul", "/ 4", "{} / 4.0", "v / 4.0f", true, false, false, true},
};

// A reference expression being built, with what its next operation needs to know of it.
struct Operand {
  std::string text;
  bool arithmetic = false;   // an operator expression: parenthesise before applying another op
  bool nonnegative = false;
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

Operand apply(const PointwiseOp& op, const Operand& operand) {
  const bool wrap = operand.arithmetic && op.arithmetic;
  const std::string inner = wrap ? "(" + operand.text + ")" : operand.text;
  return {replace_all(op.reference, "{}", inner), op.arithmetic,
          op.nonnegative || (operand.nonnegative && op.keeps_sign)};
}

// Named dims and the tensors written in them: one task's shapes on every device at once.
using Dims = std::map<std::string, int64_t>;
struct Tensor {
  std::string name;
  std::vector<std::string> dims;
};

std::string shape_text(const Tensor& tensor, const Dims& dims, int64_t plus) {
  std::string text = "[";
  for (size_t i = 0; i < tensor.dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims.at(tensor.dims[i]) + plus);
  return text + "]";
}

std::string shapes_line(const std::vector<Tensor>& tensors, const Dims& dims, int64_t plus) {
  std::string line = "{";
  for (size_t i = 0; i < tensors.size(); ++i)
    line += (i ? ", " : "") + tensors[i].name + ": " + shape_text(tensors[i], dims, plus);
  return line + "}";
}

// One task as drawn, before it becomes YAML.
struct Draft {
  std::string family;
  std::string slug;
  std::string recipe;
  std::string reference;
  std::vector<std::string> input_lines;  // "{name: x, dtype: float32, draw: {...}}"
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<Tensor> tensors;  // inputs then the output
  Dims cpu_dims;
  Dims cuda_dims;
  std::string tolerance;  // "{atol: ..., rtol: ...}", empty for the catalog's default
};

constexpr const char* kNormalInput = "draw: {kind: normal, mean: 0.0, stddev: 1.0}}";

class Drawer {
 public:
  explicit Drawer(uint64_t seed) : random_(seed) {}

  size_t below(size_t count) { return static_cast<size_t>(random_() % count); }
  template <typename T>
  const T& pick(const std::vector<T>& options) { return options[below(options.size())]; }

  // A chain of `length` pointwise operations that changes something at every step.
  std::vector<const PointwiseOp*> chain(size_t length, Operand& operand) {
    std::vector<const PointwiseOp*> ops;
    std::set<std::string> kinds;
    for (int attempt = 0; ops.size() < length && attempt < 64; ++attempt) {
      const PointwiseOp& op = kPointwiseOps[below(std::size(kPointwiseOps))];
      if (kinds.count(op.kind)) continue;
      if (operand.nonnegative && op.identity_on_nonnegative) continue;
      kinds.insert(op.kind);
      ops.push_back(&op);
      operand = apply(op, operand);
    }
    return ops;
  }

  Draft elementwise() {
    Draft draft;
    draft.family = "elementwise";
    Operand value{"x"};
    const auto ops = chain(1 + below(4), value);
    std::string stages;
    for (const PointwiseOp* op : ops) {
      draft.slug += (draft.slug.empty() ? "" : "_") + std::string(op->slug);
      draft.recipe += (draft.recipe.empty() ? "" : " -> ") + std::string(op->label);
      stages += (stages.empty() ? "" : " | ") + std::string(op->stage);
    }
    draft.reference = value.text;
    draft.input_lines = {std::string("{name: x, dtype: float32, ") + kNormalInput};
    draft.params = {{"stages", stages}};
    draft.tensors = {{"x", {"R", "C"}}, {"y", {"R", "C"}}};
    draft.cpu_dims = {{"R", pick<int64_t>({64, 96, 128, 256, 384})}, {"C", pick<int64_t>({512, 1024, 2048, 4096})}};
    draft.cuda_dims = {{"R", pick<int64_t>({1024, 2048, 4096, 8192})}, {"C", pick<int64_t>({4096, 8192, 16384})}};
    return draft;
  }

  Draft gemm() {
    Draft draft;
    draft.family = "gemm";
    const size_t form = below(3);  // linear with bias, linear without, matmul
    const bool bias = form == 0;
    Operand value{form == 2 ? "matmul(a, b)" : bias ? "linear(a, b, bias)" : "linear(a, b)"};
    draft.slug = form == 2 ? "matmul" : bias ? "linear_bias" : "linear";
    draft.recipe = form == 2 ? "matmul" : bias ? "linear with bias" : "linear";
    const auto ops = chain(below(4), value);
    std::string epilogue;
    for (const PointwiseOp* op : ops) {
      draft.slug += "_" + std::string(op->slug);
      draft.recipe += " -> " + std::string(op->label);
      epilogue += (epilogue.empty() ? "" : " | ") + std::string(op->stage);
    }
    draft.reference = value.text;
    draft.input_lines = {std::string("{name: a, dtype: float32, ") + kNormalInput,
                         "{name: b, dtype: float32, draw: {kind: uniform, low: -0.05, high: 0.05}}"};
    if (bias) draft.input_lines.push_back(std::string("{name: bias, dtype: float32, ") + kNormalInput);
    draft.params = {{"b_layout", form == 2 ? "kn" : "nk"}, {"bias", bias ? "true" : "false"},
                    {"epilogue", epilogue.empty() ? "v" : epilogue}};
    draft.tensors = {{"a", {"M", "K"}}, {"b", form == 2 ? std::vector<std::string>{"K", "N"} : std::vector<std::string>{"N", "K"}}};
    if (bias) draft.tensors.push_back({"bias", {"N"}});
    draft.tensors.push_back({"y", {"M", "N"}});
    draft.cpu_dims = {{"M", pick<int64_t>({32, 64, 96, 128})},
                      {"N", pick<int64_t>({64, 128, 192, 256})},
                      {"K", pick<int64_t>({64, 128, 256, 384})}};
    draft.cuda_dims = {{"M", pick<int64_t>({1024, 2048, 4096})},
                       {"N", pick<int64_t>({1024, 2048, 4096, 8192})},
                       {"K", pick<int64_t>({1024, 2048, 4096})}};
    draft.tolerance = "{atol: 1.0e-3, rtol: 1.0e-3}";
    return draft;
  }

  Draft rowwise() {
    Draft draft;
    draft.family = "rowwise";
    const std::string op = pick<std::string>({"softmax", "log_softmax", "rms_norm", "layer_norm"});
    draft.input_lines = {std::string("{name: x, dtype: float32, ") + kNormalInput};
    if (op == "softmax" || op == "log_softmax") {
      draft.reference = op + "(x, 1)";
      draft.recipe = op + " over dim 1";
      draft.slug = op;
      draft.params = {{"op", op}, {"reduce_begin", "1"}, {"reduce_end", "1"}};
      draft.tensors = {{"x", {"R", "C"}}, {"y", {"R", "C"}}};
      draft.cpu_dims = {{"R", pick<int64_t>({32, 64, 128, 256})}, {"C", pick<int64_t>({256, 1024, 2048, 4096})}};
      draft.cuda_dims = {{"R", pick<int64_t>({1024, 4096, 8192})}, {"C", pick<int64_t>({4096, 16384, 32768})}};
      draft.tolerance = "{atol: 1.0e-5, rtol: 1.0e-4}";
      return draft;
    }
    const std::string eps = pick<std::string>({"1e-5", "1e-6"});
    if (op == "rms_norm") {
      draft.reference = "rms_norm(x, 1, " + eps + ")";
      draft.recipe = "rms_norm over dim 1";
      draft.slug = "rms_norm";
      draft.params = {{"op", op}, {"reduce_begin", "1"}, {"reduce_end", "1"}, {"eps", eps}};
      draft.tensors = {{"x", {"B", "F", "L"}}, {"y", {"B", "F", "L"}}};
      draft.cpu_dims = {{"B", pick<int64_t>({4, 8, 16})}, {"F", pick<int64_t>({32, 64, 128})}, {"L", pick<int64_t>({256, 512, 1024})}};
      draft.cuda_dims = {{"B", pick<int64_t>({16, 32, 64})}, {"F", pick<int64_t>({64, 128, 256})}, {"L", pick<int64_t>({4096, 16384})}};
      draft.tolerance = "{atol: 1.0e-4, rtol: 1.0e-4}";
      return draft;
    }
    const size_t ndims = 1 + below(2);
    draft.reference = "layer_norm(x, weight, bias, " + std::to_string(ndims) + ", " + eps + ")";
    draft.recipe = "layer_norm over the last " + std::to_string(ndims) + (ndims == 1 ? " dim" : " dims");
    draft.slug = "layer_norm" + std::to_string(ndims);
    draft.input_lines.push_back("{name: weight, dtype: float32, draw: {kind: normal, mean: 1.0, stddev: 0.1}}");
    draft.input_lines.push_back("{name: bias, dtype: float32, draw: {kind: normal, mean: 0.0, stddev: 0.1}}");
    draft.params = {{"op", op}, {"reduce_begin", std::to_string(3 - ndims)}, {"reduce_end", "2"}, {"eps", eps}};
    const std::vector<std::string> normalised =
        ndims == 1 ? std::vector<std::string>{"H"} : std::vector<std::string>{"S", "H"};
    draft.tensors = {{"x", {"B", "S", "H"}}, {"weight", normalised}, {"bias", normalised}, {"y", {"B", "S", "H"}}};
    draft.cpu_dims = {{"B", pick<int64_t>({4, 8, 16})}, {"S", pick<int64_t>({32, 64, 128})}, {"H", pick<int64_t>({256, 512, 768})}};
    draft.cuda_dims = {{"B", pick<int64_t>({16, 32, 64})}, {"S", pick<int64_t>({512, 1024, 2048})}, {"H", pick<int64_t>({1024, 4096})}};
    draft.tolerance = "{atol: 1.0e-4, rtol: 1.0e-4}";
    return draft;
  }

  Draft reduction() {
    Draft draft;
    draft.family = "reduction";
    const std::string op = pick<std::string>({"sum", "mean", "max"});
    const size_t dim = below(3);
    const bool keepdim = below(2) == 0;
    const std::vector<std::string> names{"A", "B", "C"};
    draft.reference = op + "(x, " + std::to_string(dim) + (keepdim ? ", 1)" : ")");
    draft.recipe = op + " over dim " + std::to_string(dim) + (keepdim ? ", keeping it" : "");
    draft.slug = op + "_dim" + std::to_string(dim) + (keepdim ? "_keep" : "");
    draft.input_lines = {std::string("{name: x, dtype: float32, ") + kNormalInput};
    draft.params = {{"op", op}, {"dim", std::to_string(dim)}, {"keepdim", keepdim ? "true" : "false"}};
    std::vector<std::string> out;
    for (size_t d = 0; d < 3; ++d) {
      if (d != dim) out.push_back(names[d]);
      else if (keepdim) out.push_back("ONE");
    }
    draft.tensors = {{"x", names}, {"y", out}};
    draft.cpu_dims = {{"A", pick<int64_t>({8, 16, 32})}, {"B", pick<int64_t>({64, 128, 256})}, {"C", pick<int64_t>({127, 255, 512})}};
    draft.cuda_dims = {{"A", pick<int64_t>({64, 128})}, {"B", pick<int64_t>({1024, 4096})}, {"C", pick<int64_t>({1023, 4095})}};
    if (keepdim) draft.cpu_dims["ONE"] = draft.cuda_dims["ONE"] = 1;
    if (op != "max") draft.tolerance = "{atol: 1.0e-4, rtol: 1.0e-4}";
    return draft;
  }

  Draft draw(const std::string& family) {
    if (family == "elementwise") return elementwise();
    if (family == "gemm") return gemm();
    if (family == "rowwise") return rowwise();
    return reduction();
  }

 private:
  std::mt19937_64 random_;
};

// Second shapes move every dim by 3, as the ported tasks' do; a kept dim of 1 stays 1.
std::string second_shapes_line(const Draft& draft, const Dims& dims) {
  Dims moved = dims;
  for (auto& [name, size] : moved)
    if (name != "ONE") size += 3;
  return shapes_line(draft.tensors, moved, 0);
}

// A range per dim from 1 to its size at these shapes; a kept dim of 1 is the number 1.
std::string shape_range_lines(const Draft& draft, const Dims& dims, uint32_t draws) {
  std::string text = "    dims: {";
  bool first = true;
  for (const auto& [name, size] : dims) {
    if (name == "ONE") continue;
    text += (first ? "" : ", ") + name + ": {from: 1, to: " + std::to_string(size) + ", step: 1}";
    first = false;
  }
  text += "}\n    shapes: {";
  for (size_t i = 0; i < draft.tensors.size(); ++i) {
    text += (i ? ", " : "") + draft.tensors[i].name + ": [";
    for (size_t d = 0; d < draft.tensors[i].dims.size(); ++d) {
      const std::string& dim = draft.tensors[i].dims[d];
      text += (d ? ", " : "") + (dim == "ONE" ? std::string("1") : dim);
    }
    text += "]";
  }
  return text + "}\n    draws: " + std::to_string(draws) + "\n";
}

std::string yaml_of(const Draft& draft, const std::string& name, const TaskGeneratorOptions& options,
                    size_t index) {
  const uint64_t seed = options.seed;
  std::string text;
  text += "# Written by `drk tasks generate --seed " + std::to_string(seed) + "` (docs/tasks.md, \"Generated tasks\").\n";
  text += "name: " + name + "\n";
  text += "title: \"" + draft.recipe + "\"\n";
  text += "origin: \"generated (seed " + std::to_string(seed) + ", draw " + std::to_string(index) + ")\"\n";
  text += "family: " + draft.family + "\n";
  text += "inputs:\n";
  for (const auto& line : draft.input_lines) text += "  - " + line + "\n";
  text += "outputs: [y]\n";
  text += "reference: \"" + draft.reference + "\"\n";
  text += "params:\n";
  for (const auto& [key, value] : draft.params) text += "  " + key + ": \"" + value + "\"\n";
  text += "shapes:\n";
  text += "  cpu: " + shapes_line(draft.tensors, draft.cpu_dims, 0) + "\n";
  text += "  cuda: " + shapes_line(draft.tensors, draft.cuda_dims, 0) + "\n";
  text += "second_shapes:\n";
  text += "  cpu: " + second_shapes_line(draft, draft.cpu_dims) + "\n";
  text += "  cuda: " + second_shapes_line(draft, draft.cuda_dims) + "\n";
  if (options.shape_ranges) {
    text += "shape_range:\n";
    text += "  cpu:\n" + shape_range_lines(draft, draft.cpu_dims, options.range_draws);
    text += "  cuda:\n" + shape_range_lines(draft, draft.cuda_dims, options.range_draws);
  }
  if (!draft.tolerance.empty()) text += "tolerances:\n  float32: " + draft.tolerance + "\n";
  return text;
}

}  // namespace

const std::vector<std::string>& generated_families() {
  static const std::vector<std::string> families{"elementwise", "gemm", "rowwise", "reduction"};
  return families;
}

std::vector<std::string> generated_pointwise_ops() {
  std::vector<std::string> slugs;
  for (const PointwiseOp& op : kPointwiseOps) slugs.push_back(op.slug);
  return slugs;
}

Result<std::vector<GeneratedTask>> generate_tasks(const TaskGeneratorOptions& options) {
  std::string known;
  for (const auto& family : generated_families()) known += (known.empty() ? "" : ", ") + family;
  if (options.count == 0) return make_error(Errc::invalid_argument, "the task count is 0: ask for at least one task");
  if (options.families.empty())
    return make_error(Errc::invalid_argument, "no family to generate: name one or more of " + known);
  for (const auto& family : options.families) {
    if (std::find(generated_families().begin(), generated_families().end(), family) == generated_families().end())
      return make_error(Errc::invalid_argument,
                        "family '" + family + "' cannot be generated: the generated families are " + known);
  }
  Drawer drawer(options.seed);
  std::vector<GeneratedTask> tasks;
  std::set<std::string> seen;  // reference and shapes of the tasks drawn so far
  constexpr size_t kAttemptsPerTask = 32;
  for (size_t attempt = 0; tasks.size() < options.count && attempt < options.count * kAttemptsPerTask; ++attempt) {
    const std::string& family = options.families[tasks.size() % options.families.size()];
    Draft draft = drawer.draw(family);
    const std::string identity = draft.reference + shapes_line(draft.tensors, draft.cpu_dims, 0) +
                                 shapes_line(draft.tensors, draft.cuda_dims, 0);
    if (!seen.insert(identity).second) continue;
    char number[24];
    std::snprintf(number, sizeof number, "%03zu", tasks.size() + 1);
    const std::string name = options.name_prefix + "_" + number + "_" + draft.slug;
    tasks.push_back({name, draft.family, draft.recipe, yaml_of(draft, name, options, tasks.size() + 1)});
  }
  return tasks;
}

}  // namespace drk::kernels
