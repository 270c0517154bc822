// The task catalog: every shipped task loads and its reference yields the declared shapes;
// FLOPs and minimum bytes follow docs/tasks.md; int64 class targets are drawn in range;
// malformed files and expressions fail with errors that say where.
#include <set>

#include <ATen/ATen.h>
#include <capnp/message.h>

#include "kernels/catalog/dtype_variant.h"
#include "kernels/catalog/expression.h"
#include "kernels/catalog/float8.h"
#include "kernels/catalog/reference.h"
#include "kernels/catalog/task.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using namespace drk::kernels;

namespace {

const char* kGoodTask = R"(name: twice
title: Twice
origin: "test"
family: elementwise
inputs:
  - {name: x, dtype: float32, draw: {kind: uniform, low: -1.0, high: 1.0}}
outputs: [y]
reference: "x * 2.0"
params:
  stages: "v * 2.0f"
shapes:
  cpu: {x: [4, 8], y: [4, 8]}
  cuda: {x: [64, 64], y: [64, 64]}
)";

const char* kCrossEntropyTask = R"yaml(name: loss
title: Loss
origin: "test"
family: cross_entropy
inputs:
  - {name: logits, dtype: float32, draw: {kind: normal, mean: 0.0, stddev: 1.0}}
  - {name: targets, dtype: int64, draw: {kind: classes, of: logits, dim: 1}}
outputs: [loss]
reference: "cross_entropy(logits, targets)"
params: {}
shapes:
  cpu: {logits: [4, 8], targets: [4], loss: []}
  cuda: {logits: [64, 64], targets: [64], loss: []}
)yaml";

const char* kHalfTask = R"yaml(name: half
title: Half
origin: "test"
family: gemm
inputs:
  - {name: a, dtype: float16, draw: {kind: normal, mean: 0.0, stddev: 1.0}}
  - {name: b, dtype: float16, draw: {kind: uniform, low: -1.0, high: 1.0}}
outputs: [y]
reference: "matmul(a, b)"
params: {b_layout: kn, bias: false, epilogue: "v"}
shapes:
  cuda: {a: [8, 16], b: [16, 4], y: [8, 4]}
second_shapes:
  cuda: {a: [9, 17], b: [17, 5], y: [9, 5]}
)yaml";

const Task& shipped(const TaskCatalog& catalog, const std::string& name) {
  auto task = catalog.find(name);
  if (!task) throw std::runtime_error(task.error().message);
  return **task;
}

// Loads `text` as the only task of a fresh folder after replacing `from` by `to`.
drk::Result<TaskCatalog> load_edited(std::string text, const std::string& file, const std::string& from,
                                     const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  drk::testing::RunDir dir;
  dir.write(file, text);
  return TaskCatalog::load(dir.path().string());
}

}  // namespace

DRK_TEST_CASE("every shipped task loads and its reference yields the declared output shape") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE_MESSAGE(catalog.ok(), (catalog.ok() ? "" : catalog.error().message));
  DRK_CHECK(catalog->tasks().size() >= 24);
  std::set<std::string> families;
  for (const auto& task : catalog->tasks()) {
    DRK_INFO("task " << task.name);
    families.insert(task.family);
    auto reference = Reference::create(task);
    DRK_REQUIRE(reference.ok());
    // Every task runs on cuda; those without cpu shapes (float16) on cuda only.
    DRK_REQUIRE(task.runs_on(DeviceKind::cuda));
    if (!task.runs_on(DeviceKind::cpu)) {
      DRK_CHECK(task.output_dtype == DType::float16);
      DRK_CHECK(estimate_flops(task, DeviceKind::cpu) == 0);
      DRK_CHECK(estimate_min_bytes(task, DeviceKind::cpu) == 0);
    } else {
      auto output = reference->run(draw_inputs(task, DeviceKind::cpu, 7));
      DRK_REQUIRE(output.ok());
      DRK_CHECK(Shape(output->sizes().begin(), output->sizes().end()) == task.cpu_shapes.at(task.outputs[0]));
      DRK_CHECK((output->scalar_type() == at::kFloat));
      DRK_CHECK(estimate_min_bytes(task, DeviceKind::cpu) > 0);
    }
    // The cuda shapes are inferred, never computed.
    std::vector<std::string> names;
    std::set<std::string> integer_inputs;
    for (const auto& input : task.inputs) {
      names.push_back(input.name);
      if (input.dtype == DType::int64) integer_inputs.insert(input.name);
    }
    auto inferred = infer_shape(*parse_expression(task.reference, names), task.gpu_shapes, integer_inputs);
    DRK_REQUIRE(inferred.ok());
    DRK_CHECK(*inferred == task.gpu_shapes.at(task.outputs[0]));
    DRK_CHECK(estimate_flops(task, DeviceKind::cuda) > 0);
  }
  for (const char* family : {"elementwise", "rowwise", "gemm", "reduction", "batched_gemm", "conv2d", "cross_entropy",
                             "attention"})
    DRK_CHECK(families.count(family) == 1);
}

DRK_TEST_CASE("FLOPs and minimum bytes follow the documented convention") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const auto cuda = DeviceKind::cuda, cpu = DeviceKind::cpu;
  // conv2d: 2*N*O*Ho*Wo*C*kh*kw; x, weight in, y out.
  const Task& conv = shipped(*catalog, "conv2d");
  DRK_CHECK(estimate_flops(conv, cuda) == 2.0 * 16 * 128 * 1022 * 1022 * 16 * 3 * 3);
  DRK_CHECK(estimate_min_bytes(conv, cuda) == 4.0 * (16.0 * 16 * 1024 * 1024 + 128 * 16 * 3 * 3 + 16.0 * 128 * 1022 * 1022));
  // conv2d with its bias (1 per output), the ReLU (1) and the channel bias add (1).
  const double conv_outputs = 1 * 32 * 16 * 16;
  DRK_CHECK(estimate_flops(shipped(*catalog, "conv2d_relu_biasadd"), cpu) ==
            2.0 * conv_outputs * 16 * 3 * 3 + 3.0 * conv_outputs);
  DRK_CHECK(estimate_flops(shipped(*catalog, "batched_matmul"), cuda) == 2.0 * 128 * 512 * 2048 * 1024);
  // attention per batch entry: 2*L*S*E + 2*L*S*Ev + 6*L*S, here 4 entries of L = S = 32, E = Ev = 64.
  const double scores = 2 * 2 * 32 * 32;
  DRK_CHECK(estimate_flops(shipped(*catalog, "scaled_dot_product_attention"), cpu) ==
            2.0 * scores * 64 + 2.0 * scores * 64 + 6.0 * scores);
  // cross-entropy: 5 per logit + 1 per target; int64 targets are 8 bytes, the scalar loss 4.
  const Task& loss = shipped(*catalog, "cross_entropy");
  DRK_CHECK(estimate_flops(loss, cuda) == 5.0 * 32768 * 4096 + 32768);
  DRK_CHECK(estimate_min_bytes(loss, cuda) == 4.0 * 32768 * 4096 + 8.0 * 32768 + 4.0);
  // reductions: 1 per input element.
  const Task& sum = shipped(*catalog, "sum_reduction");
  DRK_CHECK(estimate_flops(sum, cpu) == 16.0 * 256 * 255);
  DRK_CHECK(estimate_min_bytes(sum, cpu) == 4.0 * (16 * 256 * 255 + 16 * 255));
  DRK_CHECK(estimate_flops(shipped(*catalog, "max_reduction"), cuda) == 128.0 * 4096 * 4095);
}

DRK_TEST_CASE("class targets are int64 indices drawn in [0, C) with C from the logits' shape") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const Task& task = shipped(*catalog, "cross_entropy");
  DRK_CHECK(task.inputs[1].dtype == DType::int64);
  DRK_CHECK(class_count(task, task.inputs[1], DeviceKind::cpu) == 1024);
  DRK_CHECK(class_count(task, task.inputs[1], DeviceKind::cuda) == 4096);
  auto inputs = draw_inputs(task, DeviceKind::cpu, 11);
  DRK_REQUIRE((inputs[1].scalar_type() == at::kLong));
  DRK_CHECK(inputs[1].min().item<int64_t>() >= 0);
  DRK_CHECK(inputs[1].max().item<int64_t>() < 1024);
  DRK_CHECK(inputs[1].max().item<int64_t>() > inputs[1].min().item<int64_t>());
  // The reference is F.cross_entropy: the mean of logsumexp(row) - row[target].
  auto loss = Reference::create(task)->run(inputs);
  DRK_REQUIRE(loss.ok());
  DRK_CHECK(loss->dim() == 0);
  at::Tensor picked = inputs[0].gather(1, inputs[1].unsqueeze(1)).squeeze(1);
  double expected = (at::logsumexp(inputs[0], {1}) - picked).mean().item<double>();
  DRK_CHECK(std::abs(loss->item<double>() - expected) < 1e-5);
}

DRK_TEST_CASE("int64 inputs need a classes draw and may only be cross_entropy targets") {
  drk::testing::RunDir dir;
  dir.write("loss.yaml", kCrossEntropyTask);
  auto good = TaskCatalog::load(dir.path().string());
  DRK_REQUIRE_MESSAGE(good.ok(), (good.ok() ? "" : good.error().message));
  DRK_CHECK(good->tasks()[0].cpu_shapes.at("loss").empty());
  capnp::MallocMessageBuilder message;
  auto described = message.initRoot<drk::msg::Task>();
  fill_task_message(good->tasks()[0], DeviceKind::cpu, described);
  DRK_CHECK(described.getInputs()[1].getDtype() == drk::msg::DType::INT64);
  DRK_CHECK(described.getOutputs()[0].getShape().size() == 0);
  struct Case {
    std::string from, to, expected;
  };
  for (const Case& c :
       {Case{"{kind: classes, of: logits, dim: 1}", "{kind: uniform, low: 0.0, high: 8.0}", "draw it with {kind: classes"},
        Case{"dtype: int64", "dtype: float32", "declare dtype int64"},
        Case{"of: logits, dim: 1", "of: target, dim: 1", "must name a floating input"},
        Case{"of: logits, dim: 1", "of: logits, dim: 2", "draw.dim 2 is not a dim of 'logits'"},
        Case{"dtype: int64", "dtype: int32", "inputs are float32 or float16, or int64"},
        Case{"cross_entropy(logits, targets)", "cross_entropy(logits, logits)", "targets must be an int64 input"},
        Case{"cross_entropy(logits, targets)", "cross_entropy(logits, targets * 2.0)",
             "only the targets of cross_entropy() may use it"},
        Case{"targets: [4]", "targets: [8]", "need targets [4]"}}) {
    DRK_INFO(c.to);
    auto catalog = load_edited(kCrossEntropyTask, "loss.yaml", c.from, c.to);
    DRK_REQUIRE_FALSE(catalog.ok());
    DRK_INFO(catalog.error().message);
    DRK_CHECK(catalog.error().message.find("loss.yaml:") != std::string::npos);
    DRK_CHECK(catalog.error().message.find(c.expected) != std::string::npos);
  }
}

DRK_TEST_CASE("shape inference of the new functions refuses operands that do not fit") {
  auto infer = [](const std::string& text, const ShapeMap& shapes) {
    std::vector<std::string> names;
    for (const auto& [name, shape] : shapes) names.push_back(name);
    return infer_shape(*parse_expression(text, names), shapes);
  };
  DRK_CHECK(*infer("matmul(a, b)", {{"a", {4, 8, 16}}, {"b", {4, 16, 2}}}) == Shape{4, 8, 2});
  DRK_CHECK_FALSE(infer("matmul(a, b)", {{"a", {4, 8, 16}}, {"b", {3, 16, 2}}}).ok());
  DRK_CHECK(*infer("conv2d(x, w)", {{"x", {2, 3, 10, 12}}, {"w", {5, 3, 3, 5}}}) == Shape{2, 5, 8, 8});
  DRK_CHECK_FALSE(infer("conv2d(x, w)", {{"x", {2, 3, 10, 12}}, {"w", {5, 4, 3, 3}}}).ok());
  DRK_CHECK(*infer("max(x, 1, 1)", {{"x", {2, 3, 4}}}) == Shape{2, 1, 4});
  DRK_CHECK(*infer("scaled_dot_product_attention(q, k, v)", {{"q", {2, 7, 8}}, {"k", {2, 5, 8}}, {"v", {2, 5, 3}}}) ==
            Shape{2, 7, 3});
  DRK_CHECK_FALSE(
      infer("scaled_dot_product_attention(q, k, v)", {{"q", {2, 7, 8}}, {"k", {2, 5, 8}}, {"v", {2, 4, 3}}}).ok());
}

DRK_TEST_CASE("families carry the params the generator renders from") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  auto gemm = catalog->find("gemm_multiply_leakyrelu");
  DRK_REQUIRE(gemm.ok());
  DRK_CHECK((*gemm)->params.at("b_layout") == "nk");
  DRK_CHECK((*gemm)->params.at("bias") == "true");
  DRK_CHECK((*gemm)->gpu_shapes.at("b") == Shape{8192, 8192});
  auto rms = catalog->find("rms_norm");
  DRK_REQUIRE(rms.ok());
  DRK_CHECK((*rms)->params.at("op") == "rms_norm");
  auto missing = catalog->find("relux");
  DRK_REQUIRE_FALSE(missing.ok());
  DRK_CHECK(missing.error().message.find("relu") != std::string::npos);
}

DRK_TEST_CASE("a float16 task has float16 inputs, output and tolerance, on the devices it has shapes for") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const Task& matmul = shipped(*catalog, "matmul_fp16");
  DRK_CHECK(matmul.output_dtype == DType::float16);
  DRK_CHECK(matmul.runs_on(DeviceKind::cuda));
  DRK_CHECK_FALSE(matmul.runs_on(DeviceKind::cpu));
  DRK_CHECK(matmul.devices_text() == "cuda");
  DRK_CHECK(matmul.output_tolerance().atol == 1e-2);
  DRK_CHECK(matmul.output_tolerance().rtol == 1e-2);
  DRK_CHECK(matmul.gpu_second_shapes.at("a") == Shape{4099, 4099});
  DRK_CHECK(estimate_min_bytes(matmul, DeviceKind::cuda) == 2.0 * 3 * 4096 * 4096);
  DRK_CHECK(estimate_flops(matmul, DeviceKind::cuda) == 2.0 * 4096 * 4096 * 4096);
  capnp::MallocMessageBuilder message;
  auto described = message.initRoot<drk::msg::Task>();
  fill_task_message(matmul, DeviceKind::cuda, described);
  DRK_CHECK(described.getInputs()[0].getDtype() == drk::msg::DType::FLOAT16);
  DRK_CHECK(described.getOutputs()[0].getDtype() == drk::msg::DType::FLOAT16);

  drk::testing::RunDir dir;
  dir.write("half.yaml", kHalfTask);
  auto half = TaskCatalog::load(dir.path().string());
  DRK_REQUIRE_MESSAGE(half.ok(), (half.ok() ? "" : half.error().message));
  const Task& task = half->tasks()[0];
  // Drawn in float32 and rounded: the float32 draw of the same seed, at float16.
  Task twin = task;
  for (auto& input : twin.inputs) input.dtype = DType::float32;
  const auto inputs = draw_inputs(task, DeviceKind::cuda, 5);
  const auto wide = draw_inputs(twin, DeviceKind::cuda, 5);
  for (size_t i = 0; i < inputs.size(); ++i) {
    DRK_CHECK((inputs[i].scalar_type() == at::kHalf));
    DRK_CHECK(at::equal(inputs[i], wide[i].to(at::kHalf)));
  }
  DRK_CHECK(inputs[1].abs().max().item<float>() <= 1.0f);

  struct Case {
    std::string from, to, expected;
  };
  // The CPU harness runs float16 too (the ABI carries every tensor's dtype).
  auto on_cpu = load_edited(kHalfTask, "half.yaml", "shapes:\n  cuda:", "shapes:\n  cpu: {a: [8, 16], b: [16, 4], y: [8, 4]}\n  cuda:");
  DRK_REQUIRE_MESSAGE(on_cpu.ok(), (on_cpu.ok() ? "" : on_cpu.error().message));
  DRK_CHECK(on_cpu->tasks()[0].runs_on(DeviceKind::cpu));
  for (const Case& c :
       {Case{"- {name: b, dtype: float16", "- {name: b, dtype: float32", "the floating inputs of a task share one dtype"},
        Case{"second_shapes:\n  cuda:", "second_shapes:\n  cpu:", "the task does not run on cpu"},
        Case{"shapes:\n  cuda:", "shapes:\n  gpu:", "'shapes' maps cpu and/or cuda"}}) {
    DRK_INFO(c.to);
    auto refused = load_edited(kHalfTask, "half.yaml", c.from, c.to);
    DRK_REQUIRE_FALSE(refused.ok());
    DRK_INFO(refused.error().message);
    DRK_CHECK(refused.error().message.find("half.yaml:") != std::string::npos);
    DRK_CHECK(refused.error().message.find(c.expected) != std::string::npos);
  }
}

DRK_TEST_CASE("every float32 task has float16, bfloat16 and two FP8 variants, found by NAME@DTYPE") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  size_t float32_tasks = 0;
  for (const auto& task : catalog->tasks()) float32_tasks += task.output_dtype == DType::float32;
  DRK_CHECK(catalog->variants().size() == 4 * float32_tasks);

  const Task& relu = shipped(*catalog, "relu");
  auto bf16 = catalog->find("relu@bfloat16");
  DRK_REQUIRE(bf16.ok());
  const Task& variant = **bf16;
  DRK_CHECK(variant.name == "relu@bfloat16");
  DRK_CHECK(variant.output_dtype == DType::bfloat16);
  DRK_CHECK(variant.inputs[0].dtype == DType::bfloat16);
  DRK_CHECK(variant.output_tolerance().atol == 1e-2);
  DRK_CHECK(variant.runs_on(DeviceKind::cpu));
  DRK_CHECK(variant.runs_on(DeviceKind::cuda));
  DRK_CHECK(variant.cpu_shapes == relu.cpu_shapes);
  DRK_CHECK(estimate_min_bytes(variant, DeviceKind::cpu) == estimate_min_bytes(relu, DeviceKind::cpu) / 2);
  // Drawn in float32 and rounded, like a float16 task's.
  const auto narrow = draw_inputs(variant, DeviceKind::cpu, 9);
  const auto wide = draw_inputs(relu, DeviceKind::cpu, 9);
  DRK_CHECK((narrow[0].scalar_type() == at::kBFloat16));
  DRK_CHECK(at::equal(narrow[0], wide[0].to(at::kBFloat16)));
  capnp::MallocMessageBuilder message;
  auto described = message.initRoot<drk::msg::Task>();
  fill_task_message(variant, DeviceKind::cpu, described);
  DRK_CHECK(std::string(described.getName().cStr()) == "relu@bfloat16");
  DRK_CHECK(described.getOutputs()[0].getDtype() == drk::msg::DType::BFLOAT16);

  // The reference in the variant's dtype: natively where LibTorch has the kernel, else in float32
  // and rounded (LibTorch 1.13's CPU has no float16 clamp_min).
  auto half_relu = Reference::create(**catalog->find("relu@float16"));
  DRK_REQUIRE(half_relu.ok());
  const auto half_inputs = draw_inputs(**catalog->find("relu@float16"), DeviceKind::cpu, 9);
  for (int run = 0; run < 2; ++run) {
    auto output = half_relu->run(half_inputs);
    DRK_REQUIRE_MESSAGE(output.ok(), (output.ok() ? "" : output.error().message));
    DRK_CHECK((output->scalar_type() == at::kHalf));
    DRK_CHECK(at::equal(*output, half_inputs[0].to(at::kFloat).clamp_min(0).to(at::kHalf)));
  }

  // Class targets stay int64 indices; the logits change.
  const Task& loss = **catalog->find("cross_entropy@float16");
  DRK_CHECK(loss.inputs[0].dtype == DType::float16);
  DRK_CHECK(loss.inputs[1].dtype == DType::int64);

  auto unknown = catalog->find("relu@float8");
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(unknown.error().message.find("relu@float16, relu@bfloat16") != std::string::npos);
  auto half = catalog->find("matmul_fp16@bfloat16");
  DRK_REQUIRE_FALSE(half.ok());
  DRK_CHECK(half.error().message.find("float16 and has no dtype variants") != std::string::npos);
  DRK_CHECK_FALSE(dtype_variant(**catalog->find("matmul_fp16"), DType::bfloat16).ok());
  DRK_CHECK_FALSE(dtype_variant(relu, DType::float64).ok());
}

DRK_TEST_CASE("an FP8 variant: each floating input in bytes followed by its scale, bfloat16 out, the reference on the dequantised values") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const Task& gemm = shipped(*catalog, "gemm_multiply_leakyrelu");
  auto found = catalog->find("gemm_multiply_leakyrelu@float8_e4m3fn");
  DRK_REQUIRE(found.ok());
  const Task& variant = **found;
  std::vector<std::string> names;
  for (const auto& input : variant.inputs) names.push_back(input.name);
  DRK_CHECK(names == std::vector<std::string>{"a", "a_scale", "b", "b_scale", "bias", "bias_scale"});
  DRK_CHECK(variant.inputs[0].dtype == DType::float8_e4m3fn);
  DRK_CHECK(variant.inputs[1].dtype == DType::float32);
  DRK_CHECK(variant.inputs[1].draw.kind == "scale");
  DRK_CHECK(variant.output_dtype == DType::bfloat16);
  DRK_CHECK(variant.dtype() == DType::float8_e4m3fn);
  DRK_CHECK(variant.output_tolerance().atol == 1e-2);
  DRK_CHECK(variant.cpu_shapes.at("b_scale") == std::vector<int64_t>{1});
  DRK_CHECK(variant.gpu_shapes.at("a") == gemm.gpu_shapes.at("a"));
  DRK_CHECK(variant.gpu_second_shapes.at("a_scale") == std::vector<int64_t>{1});
  DRK_CHECK(variant.title.find("float8_e4m3fn inputs with scales, bfloat16 output") != std::string::npos);
  // A quarter of the float32 task's input bytes (plus three scales), half its output bytes.
  const auto& shapes = gemm.cpu_shapes;
  auto elements = [&](const std::string& name) {
    double n = 1;
    for (int64_t d : shapes.at(name)) n *= static_cast<double>(d);
    return n;
  };
  DRK_CHECK(estimate_min_bytes(variant, DeviceKind::cpu) ==
            elements("a") + elements("b") + elements("bias") + 3 * 4 + 2 * elements("y"));
  capnp::MallocMessageBuilder message;
  auto described = message.initRoot<drk::msg::Task>();
  fill_task_message(variant, DeviceKind::cpu, described);
  DRK_CHECK(described.getInputs()[2].getDtype() == drk::msg::DType::FLOAT8E4M3FN);
  DRK_CHECK(described.getInputs()[3].getShape().size() == 1);
  DRK_CHECK(described.getOutputs()[0].getDtype() == drk::msg::DType::BFLOAT16);

  // Drawn in float32 and quantised per tensor: bytes, and a scale that puts the largest magnitude
  // on the format's largest value; the same seed, the same bytes.
  const auto inputs = draw_inputs(variant, DeviceKind::cpu, 5);
  DRK_CHECK((inputs[0].scalar_type() == at::kByte));
  DRK_CHECK((inputs[1].scalar_type() == at::kFloat));
  DRK_CHECK(at::equal(inputs[0], draw_inputs(variant, DeviceKind::cpu, 5)[0]));
  const at::Tensor a = float8_decode(inputs[0], DType::float8_e4m3fn, at::kDouble);
  DRK_CHECK(a.abs().max().item<double>() == 448.0);
  DRK_CHECK(inputs[1].item<float>() > 0.0f);

  // The reference: float64 scales give the exact answer on the dequantised values; float32 ones
  // the bfloat16 result a user's PyTorch gives.
  auto reference = Reference::create(variant);
  DRK_REQUIRE(reference.ok());
  std::vector<at::Tensor> wide;
  for (const auto& input : inputs) wide.push_back(input.is_floating_point() ? input.to(at::kDouble) : input);
  auto exact = reference->run(wide);
  DRK_REQUIRE_MESSAGE(exact.ok(), (exact.ok() ? "" : exact.error().message));
  DRK_CHECK((exact->scalar_type() == at::kDouble));
  auto value = [&](size_t i) { return float8_decode(inputs[i], DType::float8_e4m3fn, at::kDouble) * inputs[i + 1].to(at::kDouble); };
  const at::Tensor expected = at::leaky_relu(at::linear(value(0), value(2), value(4)) * 2.0, 0.1);
  DRK_CHECK(at::allclose(*exact, expected, 1e-12, 1e-12));
  auto user = reference->run(inputs);
  DRK_REQUIRE_MESSAGE(user.ok(), (user.ok() ? "" : user.error().message));
  DRK_CHECK((user->scalar_type() == at::kBFloat16));
  DRK_CHECK(at::allclose(user->to(at::kDouble), expected, 5e-2, 5e-2));

  // The archive and the GPU check know it by its inputs' format; e5m2 is the other one.
  DRK_CHECK((**catalog->find("relu@float8_e5m2")).dtype() == DType::float8_e5m2);
  Task clash = gemm;
  clash.inputs.push_back(InputSpec{"a_scale", DType::float32, {}});
  auto refused = dtype_variant(clash, DType::float8_e4m3fn);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().message.find("has an input named 'a_scale'") != std::string::npos);
}

DRK_TEST_CASE("every FP8 variant draws and evaluates its reference, exact (float64) and as a user runs it (bfloat16)") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  int evaluated = 0;
  for (const auto& variant : catalog->variants()) {
    if (!is_float8(variant.dtype()) || !variant.runs_on(DeviceKind::cpu)) continue;
    DRK_INFO(variant.name);
    auto reference = Reference::create(variant);
    DRK_REQUIRE(reference.ok());
    const auto inputs = draw_inputs(variant, DeviceKind::cpu, 3);
    std::vector<at::Tensor> wide;
    for (const auto& input : inputs) wide.push_back(input.is_floating_point() ? input.to(at::kDouble) : input);
    auto exact = reference->run(wide);
    DRK_REQUIRE_MESSAGE(exact.ok(), (exact.ok() ? "" : exact.error().message));
    auto user = reference->run(inputs);
    DRK_REQUIRE_MESSAGE(user.ok(), (user.ok() ? "" : user.error().message));
    const auto& shape = variant.cpu_shapes.at(variant.outputs[0]);
    DRK_CHECK(exact->sizes().vec() == shape);
    DRK_CHECK((exact->scalar_type() == at::kDouble));
    DRK_CHECK((user->scalar_type() == at::kBFloat16));
    DRK_CHECK(at::isfinite(*exact).all().item<bool>());
    ++evaluated;
  }
  DRK_CHECK(evaluated >= 2 * 25);  // both formats of every float32 task that runs on the CPU
}

DRK_TEST_CASE("a GPU runs FP8 from compute capability 8.9 (Ada, Hopper), the CPU everywhere") {
  DRK_CHECK(dtype_runs_on(DType::float8_e4m3fn, DeviceKind::cuda, 90).ok());
  DRK_CHECK(dtype_runs_on(DType::float8_e5m2, DeviceKind::cuda, 89).ok());
  auto ampere = dtype_runs_on(DType::float8_e4m3fn, DeviceKind::cuda, 80);
  DRK_REQUIRE_FALSE(ampere.ok());
  DRK_CHECK(ampere.error().message.find("compute capability 8.9 or later (Ada or Hopper: FP8 tensor cores); this one is 8.0") !=
            std::string::npos);
  DRK_CHECK(ampere.error().message.find("bfloat16 or float16 form") != std::string::npos);
  DRK_CHECK(dtype_runs_on(DType::float8_e5m2, DeviceKind::cpu, 0).ok());
}

DRK_TEST_CASE("a GPU runs bfloat16 from compute capability 8.0, float16 from 5.3; the CPU both") {
  DRK_CHECK(dtype_runs_on(DType::bfloat16, DeviceKind::cuda, 90).ok());
  DRK_CHECK(dtype_runs_on(DType::bfloat16, DeviceKind::cuda, 80).ok());
  auto turing = dtype_runs_on(DType::bfloat16, DeviceKind::cuda, 75);
  DRK_REQUIRE_FALSE(turing.ok());
  DRK_CHECK(turing.error().code == drk::Errc::unsupported);
  DRK_CHECK(turing.error().message.find("compute capability 8.0 or later (Ampere); this one is 7.5") != std::string::npos);
  DRK_CHECK(dtype_runs_on(DType::float16, DeviceKind::cuda, 75).ok());
  DRK_CHECK_FALSE(dtype_runs_on(DType::float16, DeviceKind::cuda, 52).ok());
  DRK_CHECK(dtype_runs_on(DType::bfloat16, DeviceKind::cpu, 0).ok());
  DRK_CHECK(dtype_runs_on(DType::float32, DeviceKind::cuda, 35).ok());
}

DRK_TEST_CASE("the same seed draws the same inputs, another seed other inputs") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const Task& task = **catalog->find("layer_norm");
  auto a = draw_inputs(task, DeviceKind::cpu, 42), b = draw_inputs(task, DeviceKind::cpu, 42),
       c = draw_inputs(task, DeviceKind::cpu, 43);
  DRK_CHECK(a[0].equal(b[0]));
  DRK_CHECK_FALSE(a[0].equal(c[0]));
}

DRK_TEST_CASE("expression errors name the column") {
  std::vector<std::string> names{"x", "w"};
  auto unclosed = parse_expression("relu(x", names);
  DRK_REQUIRE_FALSE(unclosed.ok());
  DRK_CHECK(unclosed.error().code == drk::Errc::parse_error);
  DRK_CHECK(unclosed.error().message.find("column 7") != std::string::npos);
  auto unknown_input = parse_expression("x + y", names);
  DRK_REQUIRE_FALSE(unknown_input.ok());
  DRK_CHECK(unknown_input.error().message.find("column 5") != std::string::npos);
  auto unknown_function = parse_expression("2.0 * frobnicate(x)", names);
  DRK_REQUIRE_FALSE(unknown_function.ok());
  DRK_CHECK(unknown_function.error().message.find("column 7") != std::string::npos);
  auto tensor_for_number = parse_expression("softmax(x, w)", names);
  DRK_REQUIRE_FALSE(tensor_for_number.ok());
  DRK_CHECK(tensor_for_number.error().message.find("must be a number") != std::string::npos);
}

DRK_TEST_CASE("precedence: products bind tighter than sums, unary minus tighter than both") {
  auto e = parse_expression("-x + x * 2.0 / 4.0 - 1.0", {"x"});
  DRK_REQUIRE(e.ok());
  DRK_CHECK(e->kind == Expression::Kind::subtract);
  DRK_CHECK(e->args[0].kind == Expression::Kind::add);
  DRK_CHECK(e->args[0].args[0].kind == Expression::Kind::negate);
  DRK_CHECK(e->args[0].args[1].kind == Expression::Kind::divide);
  auto shape = infer_shape(*parse_expression("linear(x, w)", {"x", "w"}), {{"x", {8, 16}}, {"w", {4, 16}}});
  DRK_REQUIRE(shape.ok());
  DRK_CHECK(*shape == Shape{8, 4});
}

DRK_TEST_CASE("malformed task files fail naming the file and the line") {
  {
    drk::testing::RunDir dir;
    dir.write("twice.yaml", kGoodTask);
    auto catalog = TaskCatalog::load(dir.path().string());
    DRK_REQUIRE(catalog.ok());
    DRK_CHECK(catalog->tasks().size() == 1);
    capnp::MallocMessageBuilder message;
    auto task = message.initRoot<drk::msg::Task>();
    fill_task_message(catalog->tasks()[0], DeviceKind::cuda, task);
    DRK_CHECK(task.getInputs()[0].getShape()[0] == 64);
    DRK_CHECK(task.getFlops() == 64.0 * 64.0);
  }
  struct Case {
    std::string from, to, expected;
  };
  for (const Case& c : {Case{"family: elementwise", "family: convolution", "family 'convolution' is unknown"},
                        Case{"title: Twice\n", "", "missing key 'title'"},
                        Case{"y: [4, 8]}", "y: [4, 0]}", "dim <= 0"},
                        Case{"x * 2.0", "x * (2.0", "column 9"},
                        Case{"y: [4, 8]}", "y: [8, 4]}", "declared [8, 4]"}}) {
    drk::testing::RunDir dir;
    std::string text = kGoodTask;
    text.replace(text.find(c.from), c.from.size(), c.to);
    dir.write("twice.yaml", text);
    auto catalog = TaskCatalog::load(dir.path().string());
    DRK_REQUIRE_FALSE(catalog.ok());
    DRK_INFO(catalog.error().message);
    DRK_CHECK(catalog.error().message.find("twice.yaml:") != std::string::npos);
    DRK_CHECK(catalog.error().message.find(c.expected) != std::string::npos);
  }
}

namespace {

const char* kRangeTask = R"yaml(name: rows
title: Rows
origin: "test"
family: elementwise
inputs:
  - {name: x, dtype: float32, draw: {kind: normal, mean: 0.0, stddev: 1.0}}
outputs: [y]
reference: "relu(x)"
params:
  stages: "v > 0.0f ? v : 0.0f"
shapes:
  cpu: {x: [4, 8], y: [4, 8]}
shape_range:
  cpu:
    dims: {R: {from: 1, to: 9, step: 2}, C: [8, 33]}
    shapes: {x: [R, C], y: [R, C]}
    draws: 3
)yaml";

}  // namespace

DRK_TEST_CASE("a shape range: its dims and corners, distinct draws by seed, and errors that name the line") {
  auto loaded = load_edited(kRangeTask, "rows.yaml", "draws: 3", "draws: 3");
  DRK_REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  const Task& task = loaded->tasks()[0];
  const ShapeRange* range = task.shape_range(DeviceKind::cpu);
  DRK_REQUIRE(range != nullptr);
  DRK_CHECK(task.shape_range(DeviceKind::cuda) == nullptr);
  DRK_CHECK(range->dims.at("R").count() == 5);  // 1, 3, 5, 7, 9
  DRK_CHECK(range->size() == 10);
  DRK_CHECK(range->smallest().at("x") == Shape{1, 8});
  DRK_CHECK(range->largest().at("y") == Shape{9, 33});
  DRK_CHECK(range->describe() == "C in {8, 33}, R 1..9 by 2; x [R, C], y [R, C]; 3 drawn of 10");

  const auto drawn = range->draw(42);
  DRK_REQUIRE(drawn.size() == 3);
  std::set<Shape> distinct;
  for (const auto& shapes : drawn) {
    const Shape& x = shapes.at("x");
    DRK_CHECK(x == shapes.at("y"));
    DRK_CHECK((x[0] >= 1 && x[0] <= 9 && x[0] % 2 == 1));
    DRK_CHECK((x[1] == 8 || x[1] == 33));
    distinct.insert(x);
  }
  DRK_CHECK(distinct.size() == 3);
  DRK_CHECK(range->draw(42) == drawn);
  bool other_seed_differs = false;
  for (uint64_t seed = 1; seed < 8 && !other_seed_differs; ++seed) other_seed_differs = range->draw(seed) != drawn;
  DRK_CHECK(other_seed_differs);
  // Timed shapes: each names every dim with one of its values; the reference is checked at them.
  auto timed = load_edited(kRangeTask, "rows.yaml", "draws: 3", "draws: 3\n    timed: [{R: 9, C: 33}, {R: 1, C: 8}]");
  DRK_REQUIRE_MESSAGE(timed.ok(), (timed.ok() ? "" : timed.error().message));
  const ShapeRange* timed_range = timed->tasks()[0].shape_range(DeviceKind::cpu);
  DRK_REQUIRE(timed_range->timed.size() == 2);
  DRK_CHECK(timed_range->at(timed_range->timed[0]).at("x") == Shape{9, 33});
  DRK_CHECK(timed_range->at(timed_range->timed[1]).at("y") == Shape{1, 8});
  DRK_CHECK(timed_range->describe() ==
            "C in {8, 33}, R 1..9 by 2; x [R, C], y [R, C]; 3 drawn of 10; timed at C=33 R=9, C=8 R=1");
  DRK_CHECK(input_shapes_text(at_shapes(task, DeviceKind::cpu, timed_range->at(timed_range->timed[0])), DeviceKind::cpu) ==
            "x [9, 33]");
  // A range smaller than the draws is tried whole, each shape once.
  auto small = load_edited(kRangeTask, "rows.yaml", "{from: 1, to: 9, step: 2}", "[4]");
  DRK_REQUIRE(small.ok());
  DRK_CHECK(small->tasks()[0].shape_range(DeviceKind::cpu)->draw(7).size() == 2);
  // At a drawn shape the task is the same task with those shapes.
  const Task at = at_shapes(task, DeviceKind::cpu, drawn[0]);
  DRK_CHECK(at.cpu_shapes.at("x") == drawn[0].at("x"));
  DRK_CHECK(draw_inputs(at, DeviceKind::cpu, 3)[0].sizes().vec() == drawn[0].at("x"));

  struct Case {
    std::string from, to, expected;
  };
  for (const Case& c : {
           Case{"step: 2}", "step: 0}", "a range is {from: A, to: B, step: S} with 0 < A <= B and S > 0"},
           Case{"C: [8, 33]", "C: [8, 0]", "shape_range.cpu.dims.C lists '0'"},
           Case{"shapes: {x: [R, C], y: [R, C]}", "shapes: {x: [R, Q], y: [R, C]}", "'Q' is neither a dim"},
           Case{"shapes: {x: [R, C], y: [R, C]}", "shapes: {x: [R, C]}", "shape_range.cpu.shapes lacks 'y'"},
           Case{"shapes: {x: [R, C], y: [R, C]}", "shapes: {x: [R, C, 2], y: [R, C, 2]}", "changes dims, not ranks"},
           Case{"shapes: {x: [R, C], y: [R, C]}", "shapes: {x: [R, 8], y: [R, 8]}", "shape_range.cpu.dims.C is used by no tensor"},
           Case{"shapes: {x: [R, C], y: [R, C]}", "shapes: {x: [R, C], y: [R, 8]}", "but output 'y' is declared [9, 8]"},
           Case{"draws: 3", "draws: 0", "draws is how many shapes an evaluation tries, 1 to 64"},
           Case{"draws: 3", "samples: 3", "shape_range.cpu.samples is unknown"},
           Case{"shape_range:\n  cpu:", "shape_range:\n  cuda:", "shape_range.cuda is given but shapes.cuda is not"},
           Case{"draws: 3", "draws: 3\n    timed: {R: 3, C: 8}", "shape_range.cpu.timed lists 1 to 8 shapes"},
           Case{"draws: 3", "draws: 3\n    timed: [{R: 3}]", "shape_range.cpu.timed's entry lacks dim C"},
           Case{"draws: 3", "draws: 3\n    timed: [{R: 4, C: 8}]", "shape_range.cpu.timed gives R '4', which is not among its values"},
           Case{"draws: 3", "draws: 3\n    timed: [{R: 3, C: 8, Q: 1}]", "shape_range.cpu.timed names 'Q', which is no dim"},
       }) {
    DRK_INFO(c.to);
    auto refused = load_edited(kRangeTask, "rows.yaml", c.from, c.to);
    DRK_REQUIRE_FALSE(refused.ok());
    DRK_INFO(refused.error().message);
    DRK_CHECK(refused.error().message.find("rows.yaml:") != std::string::npos);
    DRK_CHECK(refused.error().message.find(c.expected) != std::string::npos);
  }
}
