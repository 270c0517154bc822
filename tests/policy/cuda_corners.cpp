#include "tests/policy/cuda_corners.h"

#include <capnp/message.h>

#include <stdexcept>

#include "kernels/catalog/task.h"

namespace drk::testing {

using schedule::Choice;
using schedule::Device;
using schedule::Family;
using schedule::Problem;

std::vector<Choice> corner_choices(Family family, Device device, schedule::Precision precision) {
  const auto family_knobs = schedule::knobs(family, device);
  std::vector<Choice> corners(4, Choice{family, {}, device});
  for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
    const auto last = static_cast<uint16_t>(family_knobs[knob].options.size() - 1);
    corners[0].options.push_back(0);
    corners[1].options.push_back(last);
    corners[2].options.push_back(knob % 2 == 0 ? 0 : last);
    corners[3].options.push_back(knob % 2 == 0 ? last : 0);
  }
  for (auto& corner : corners) {
    for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
      if (!schedule::option_applies(family, device, precision, static_cast<int>(knob), corner.options[knob]))
        corner.options[knob] = 0;
    }
  }
  return corners;
}

std::vector<Problem> catalog_problems(const std::vector<std::string>& names, msg::Device device) {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) throw std::runtime_error(catalog.error().describe());
  std::vector<Problem> problems;
  for (const auto& name : names) {
    auto task = catalog->find(name);
    if (!task) throw std::runtime_error(task.error().describe());
    capnp::MallocMessageBuilder message;
    kernels::fill_task_message(**task, device == msg::Device::CUDA ? kernels::DeviceKind::cuda : kernels::DeviceKind::cpu,
                               message.initRoot<msg::Task>());
    auto problem = schedule::problem_from_task(message.getRoot<msg::Task>().asReader());
    if (!problem) throw std::runtime_error(problem.error().describe());
    problems.push_back(std::move(*problem));
  }
  return problems;
}

std::vector<RenderPoint> render_corner_sample() {
  const auto problems = catalog_problems(
      {"relu", "softmax", "log_softmax", "layer_norm", "rms_norm", "gemm_multiply_leakyrelu", "matmul"},
      msg::Device::CUDA);
  // An elementwise chain of three stages, so that fusion groups differ (the catalog's
  // elementwise tasks have one stage each).
  Problem chain = problems[0];
  chain.task = "relu_chain";
  chain.params["stages"] = "v * 2.0f | v > 0.0f ? v : 0.1f * v | tanhf(v)";
  std::vector<RenderPoint> points;
  auto add = [&](const Problem& problem, const std::vector<Choice>& choices) {
    for (const auto& choice : choices) points.push_back({problem, choice});
  };
  const auto elementwise = corner_choices(Family::elementwise, Device::cuda);
  const auto rowwise = corner_choices(Family::rowwise, Device::cuda);
  const auto gemm = corner_choices(Family::gemm, Device::cuda);
  add(chain, elementwise);
  add(problems[1], rowwise);
  add(problems[2], {rowwise[0]});
  add(problems[3], {rowwise[1], rowwise[2]});
  add(problems[4], {rowwise[3]});
  add(problems[5], gemm);
  Choice library = gemm[0];
  library.options[schedule::cuda_gemm_knob::use_library] = 1;
  add(problems[6], {library});
  for (auto& point : half_matmul_points()) points.push_back(std::move(point));
  // A float16 linear layer on tensor cores: b [N, K] (col_major fragments), a bias and an
  // epilogue, fused and separate (matmul_fp16's simt corners build the float16 drk_finish).
  Problem linear = half_matmul_points()[0].problem;
  linear.task = "linear_fp16";
  linear.params = {{"b_layout", "nk"}, {"bias", "true"}, {"epilogue", "v * 2.0f | v > 0.0f ? v : 0.1f * v"}};
  linear.inputs = {{"a", {64, 96}}, {"b", {80, 96}}, {"bias", {80}}};
  linear.outputs = {{"y", {64, 80}}};
  const auto half_gemm = corner_choices(Family::gemm, Device::cuda, schedule::Precision::float16);
  add(linear, {half_gemm[1], half_gemm[3]});
  return points;
}

std::vector<RenderPoint> gemm_conv_corner_sample() {
  const auto problems = catalog_problems(
      {"batched_matmul", "conv2d", "conv2d_relu_biasadd", "conv2d_relu_hardswish"}, msg::Device::CUDA);
  std::vector<RenderPoint> points;
  auto add = [&](const Problem& problem, const std::vector<Choice>& choices) {
    for (const auto& choice : choices) points.push_back({problem, choice});
  };
  const auto batched = corner_choices(Family::batched_gemm, Device::cuda);
  const auto conv = corner_choices(Family::conv2d, Device::cuda);
  add(problems[0], batched);
  Problem linear = problems[0];
  linear.task = "batched_linear";
  linear.params = {{"b_layout", "nk"}, {"bias", "true"}, {"epilogue", "v * 2.0f | v > 0.0f ? v : 0.1f * v"}};
  linear.inputs = {{"a", {3, 40, 72}}, {"b", {3, 56, 72}}, {"bias", {56}}};
  linear.outputs = {{"y", {3, 40, 56}}};
  add(linear, {batched[0], batched[2], batched[3]});
  add(problems[2], conv);
  add(problems[1], {conv[0], conv[1]});
  add(problems[3], {conv[2], conv[3]});
  return points;
}

std::vector<RenderPoint> reduction_attention_corner_sample() {
  const auto problems = catalog_problems(
      {"sum_reduction", "mean_reduction", "max_reduction", "cross_entropy", "scaled_dot_product_attention"},
      msg::Device::CUDA);
  std::vector<RenderPoint> points;
  auto add = [&](const Problem& problem, const std::vector<Choice>& choices) {
    for (const auto& choice : choices) points.push_back({problem, choice});
  };
  // vector_width 4 builds the scalar kernels too (the float4 ones are taken when inner % 4 == 0).
  const auto reduction = corner_choices(Family::reduction, Device::cuda);
  add(problems[0], {reduction[1], reduction[2]});
  add(problems[1], {reduction_warp_choice(reduction[1])});
  add(problems[2], {reduction[0]});
  const auto cross_entropy = corner_choices(Family::cross_entropy, Device::cuda);
  add(problems[3], {cross_entropy[0], cross_entropy[1], cross_entropy[3]});
  add(problems[4], corner_choices(Family::attention, Device::cuda));
  return points;
}

Choice reduction_warp_choice(Choice choice) {
  choice.options[schedule::cuda_reduction_knob::strategy] = 1;
  return choice;
}

namespace {

// Each corner of the gemm space for `task` (a 16-bit one), with math=simt and with math=tensor_core.
std::vector<RenderPoint> both_math_points(const std::string& task) {
  const auto problems = catalog_problems({task}, msg::Device::CUDA);
  std::vector<RenderPoint> points;
  for (Choice corner : corner_choices(Family::gemm, Device::cuda, problems[0].precision)) {
    for (uint16_t math : {0, 1}) {
      corner.options[schedule::cuda_gemm_knob::math] = math;
      points.push_back({problems[0], corner});
    }
  }
  return points;
}

}  // namespace

std::vector<RenderPoint> half_matmul_points() { return both_math_points("matmul_fp16"); }

std::vector<RenderPoint> brain_matmul_points() { return both_math_points("matmul@bfloat16"); }

std::vector<RenderPoint> half_rowwise_points() {
  const auto problems = catalog_problems(
      {"softmax@bfloat16", "layer_norm@bfloat16", "log_softmax@float16", "rms_norm@float16"}, msg::Device::CUDA);
  const auto corners = corner_choices(Family::rowwise, Device::cuda);
  std::vector<RenderPoint> points;
  for (const auto& corner : corners) points.push_back({problems[0], corner});
  points.push_back({problems[1], corners[1]});
  points.push_back({problems[1], corners[2]});
  points.push_back({problems[2], corners[3]});
  points.push_back({problems[3], corners[1]});
  return points;
}

std::vector<RenderPoint> half_reduction_points() {
  const auto problems = catalog_problems({"sum_reduction@bfloat16", "mean_reduction@float16", "max_reduction@bfloat16"},
                                         msg::Device::CUDA);
  std::vector<RenderPoint> points;
  const auto corners = corner_choices(Family::reduction, Device::cuda, problems[0].precision);
  for (const auto& corner : corners) points.push_back({problems[0], corner});
  points.push_back({problems[1], reduction_warp_choice(corners[1])});
  points.push_back({problems[2], corners[0]});
  points.push_back({problems[2], reduction_warp_choice(corners[1])});
  return points;
}

std::vector<RenderPoint> half_cross_entropy_points() {
  const auto problems = catalog_problems({"cross_entropy@bfloat16", "cross_entropy@float16"}, msg::Device::CUDA);
  std::vector<RenderPoint> points;
  const auto corners = corner_choices(Family::cross_entropy, Device::cuda, problems[0].precision);
  for (const auto& corner : corners) points.push_back({problems[0], corner});
  points.push_back({problems[1], corners[1]});
  return points;
}

std::vector<Problem> half_chain_problems() {
  auto chains = catalog_problems({"relu@float16", "relu@bfloat16"}, msg::Device::CUDA);
  for (auto& chain : chains) {
    chain.task = "relu_chain@" + std::string(schedule::precision_name(chain.precision));
    chain.params["stages"] = "v * 2.0f | v > 0.0f ? v : 0.1f * v | tanhf(v)";
  }
  return chains;
}

namespace {

// Every corner of `family`'s cuda space on each of the named catalog tasks.
std::vector<RenderPoint> corner_points(const std::vector<std::string>& names, Family family) {
  std::vector<RenderPoint> points;
  for (const auto& problem : catalog_problems(names, msg::Device::CUDA))
    for (const auto& choice : corner_choices(family, Device::cuda, problem.precision)) points.push_back({problem, choice});
  return points;
}

// A three-stage elementwise chain with fusion pairs (the first corner) and unfused (the second):
// groups after the first go through the float32 workspace.
void add_chain_points(const Problem& chain, std::vector<RenderPoint>& points) {
  for (uint16_t fusion : {1, 2}) {
    Choice choice = corner_choices(Family::elementwise, Device::cuda, chain.precision)[fusion == 1 ? 0 : 1];
    choice.options[schedule::cuda_elementwise_knob::fusion] = fusion;
    points.push_back({chain, choice});
  }
}

}  // namespace

std::vector<RenderPoint> float8_elementwise_points() {
  std::vector<RenderPoint> points = corner_points({"relu@float8_e4m3fn", "gelu@float8_e5m2"}, Family::elementwise);
  Problem chain = catalog_problems({"relu@float8_e4m3fn"}, msg::Device::CUDA).front();
  chain.task = "relu_chain@float8_e4m3fn";
  chain.params["stages"] = "v * 2.0f | v > 0.0f ? v : 0.1f * v | tanhf(v)";
  add_chain_points(chain, points);
  return points;
}

std::vector<RenderPoint> half_batched_gemm_points() {
  return corner_points({"batched_matmul@float16", "batched_matmul@bfloat16"}, Family::batched_gemm);
}

std::vector<RenderPoint> float8_gemm_points() {
  return corner_points({"matmul@float8_e4m3fn", "gemm_multiply_leakyrelu@float8_e5m2"}, Family::gemm);
}

std::vector<RenderPoint> half_elementwise_points() {
  std::vector<RenderPoint> points = corner_points({"relu@float16", "gelu@bfloat16"}, Family::elementwise);
  for (const auto& chain : half_chain_problems()) add_chain_points(chain, points);
  return points;
}

}  // namespace drk::testing
