// The CUDA scheduling space on a real device: corner points of every family, rendered for
// catalog tasks, are evaluated by the Evaluator's engine (nvcc, drk-sandbox-cuda, the task's
// LibTorch reference at the scaled shapes) and must be correct, with the product's own kernels
// covering the GPU time unless the library does the product. The float16 matmul_fp16 runs on
// cuda only, and matmul@bfloat16, at KernelBench's shapes (4096^3, and 4099^3 in the second-shape
// trial): their corners with CUDA cores and with tensor cores must be correct against the product
// in float64 rounded to their dtype and pass the precision check against float64. float16 and bfloat16 elementwise kernels, fused and
// through their float32 workspace, must be correct against the reference in float64 rounded to
// their dtype, and so must 16-bit rowwise and reduction kernels. Skips, saying why, without a usable GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <capnp/message.h>

#include "actors/evaluator/cuda/cuda_device.h"
#include "actors/evaluator/evaluation.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/render.h"
#include "tests/doctest_drk.h"
#include "tests/policy/cuda_corners.h"
#include "tests/support/first_gpu.h"
#include "tests/support/run_dir.h"
#include "tests/support/test_engine.h"

namespace drk::schedule {
namespace {

bool gpu_missing() { return !testing::first_gpu_or_skip(); }

evaluator::EngineOptions cuda_options(std::optional<kernels::DeviceKind> shapes, uint64_t seed,
                                      std::chrono::milliseconds call_timeout) {
  evaluator::EngineOptions options;
  options.device = kernels::DeviceKind::cuda;
  options.shapes = shapes;
  options.trials = 3;
  options.seed = seed;
  options.timing_budget_ms = 100;
  options.call_timeout = call_timeout;
  // Every core compiles: nvcc, not the GPU, takes most of this test's time (compile_all_ahead).
  options.compile_workers = std::max(2u, std::thread::hardware_concurrency());
  return options;
}

testing::TestEngine& shared_engine() {
  static testing::TestEngine engine("render-cuda-evaluation-test",
                                    cuda_options(kernels::DeviceKind::cpu, 97, std::chrono::milliseconds(4000)));
  return engine;
}

// At the cuda shapes: the tasks that have no scaled ones (matmul_fp16).
testing::TestEngine& published_shapes_engine() {
  static testing::TestEngine engine("render-cuda-evaluation-published-test",
                                    cuda_options(std::nullopt, 98, std::chrono::milliseconds(10000)));
  return engine;
}

// Whether the point reaches the product through the library (coverage below 1).
bool library_point(const Choice& choice) {
  const auto family_knobs = knobs(choice.family, choice.device);
  for (size_t knob = 0; knob < family_knobs.size(); ++knob)
    if (family_knobs[knob].name == "use_library") return choice.value(static_cast<int>(knob)) == "library";
  return false;
}

// A point's evaluation result and the message that holds it.
struct Evaluated {
  capnp::MallocMessageBuilder message;
  msg::EvalResult::Reader result;
};

// Every point rendered and its compile queued on `engine`'s pool at once, so that the points'
// compiles run side by side while the first ones are evaluated.
void compile_all_ahead(evaluator::EvaluationEngine& engine, const std::vector<testing::RenderPoint>& points) {
  for (const auto& point : points)
    if (auto source = render(point.problem, point.choice); source.ok()) (void)engine.compile_pool().submit(*source);
}

// Renders `point` and evaluates it with `engine` as candidate number `index`.
std::unique_ptr<Evaluated> evaluate_point(evaluator::EvaluationEngine& engine, const testing::RenderPoint& point,
                                          int index) {
  DRK_INFO(point.problem.task << ": " << point.choice.describe());
  auto source = render(point.problem, point.choice);
  DRK_REQUIRE_MESSAGE(source.ok(), (source.ok() ? "" : source.error().describe()));
  auto evaluated = std::make_unique<Evaluated>();
  auto out = evaluated->message.initRoot<msg::EvalResult>();
  const evaluator::CandidateInput input{"render/" + point.problem.task + "/" + std::to_string(index),
                                        point.problem.task, kernels::DeviceKind::cuda, *source};
  auto status = engine.evaluate(input, out);
  DRK_REQUIRE_MESSAGE(status.ok(), status.error().describe());
  evaluated->result = out.asReader();
  return evaluated;
}

// Evaluates every point with `engine`: each must compile, run, be correct (on the second shapes
// too), and have its own kernels cover the GPU time unless the library does the product. Returns
// how many were evaluated.
int evaluate_points(evaluator::EvaluationEngine& engine, const std::vector<testing::RenderPoint>& points) {
  compile_all_ahead(engine, points);
  int evaluated = 0;
  for (const auto& point : points) {
    DRK_INFO(point.problem.task << ": " << point.choice.describe());
    const auto outcome = evaluate_point(engine, point, evaluated++);
    const auto result = outcome->result;
    // Copies: the captured text is printed when a check fails, after these readers are gone.
    const std::string compile_log = result.getCompileLog().cStr();
    const std::string error_text = result.getErrorText().cStr();
    const std::string second_shape = result.getEvidence().getSecondShapeWrong().cStr();
    DRK_INFO("compile log: " << compile_log);
    DRK_INFO("error text: " << error_text << "; second shape: " << second_shape << "; max abs error "
                            << result.getMaxAbsError());
    DRK_CHECK(result.getCompiled());
    DRK_CHECK(result.getSandbox() == msg::SandboxOutcome::OK);
    DRK_CHECK(result.getCorrect());
    DRK_CHECK(result.getEvidence().getCudaError().size() == 0);
    DRK_CHECK(second_shape.empty());
    if (library_point(point.choice)) DRK_CHECK(result.getGpu().getCoverage() < 1.0);
    else DRK_CHECK(result.getGpu().getCoverage() == doctest::Approx(1.0));
  }
  return evaluated;
}

int evaluate_points(const std::vector<testing::RenderPoint>& points) { return evaluate_points(*shared_engine(), points); }

// Every point of `points` evaluated and correct (evaluate_points), and how many, for the log.
void evaluate_all(const std::vector<testing::RenderPoint>& points, const char* what) {
  const int evaluated = evaluate_points(points);
  DRK_CHECK(evaluated == static_cast<int>(points.size()));
  std::printf("evaluated %d rendered %s CUDA candidates\n", evaluated, what);
}

// Every corner of each task's family.
std::vector<testing::RenderPoint> corner_points(const std::vector<std::string>& tasks) {
  std::vector<testing::RenderPoint> points;
  for (const auto& problem : testing::catalog_problems(tasks, msg::Device::CUDA))
    for (const auto& choice : testing::corner_choices(problem.family, Device::cuda)) points.push_back({problem, choice});
  return points;
}

DRK_TEST_CASE("rendered CUDA corner points of every family are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  auto points = corner_points(
      {"gelu", "softmax", "log_softmax", "layer_norm", "rms_norm", "gemm_multiply_leakyrelu", "matmul", "matvec"});
  // The gemm tasks' second corner with the product ours, and with it the library's (fused epilogue).
  const size_t count = points.size();
  for (size_t index = 0; index < count; ++index) {
    if (points[index].problem.family != Family::gemm || index % 4 != 1) continue;
    testing::RenderPoint library = points[index];
    library.choice.options[cuda_gemm_knob::use_library] = 0;
    points.push_back(library);
    library.choice.options[cuda_gemm_knob::use_library] = 1;
    library.choice.options[cuda_gemm_knob::epilogue] = 0;
    points.push_back(library);
  }
  std::printf("evaluated %d rendered CUDA candidates\n", evaluate_points(points));
}

DRK_TEST_CASE("rendered CUDA batched_gemm and conv2d corner points are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  const int evaluated =
      evaluate_points(corner_points({"batched_matmul", "conv2d", "conv2d_relu_biasadd", "conv2d_relu_hardswish"}));
  std::printf("evaluated %d rendered batched_gemm and conv2d CUDA candidates\n", evaluated);
}

DRK_TEST_CASE("rendered CUDA reduction, cross_entropy and attention points are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  // Every corner of each task, and warp_per_output (between the corners) for each reduction.
  std::vector<testing::RenderPoint> points;
  for (const auto& problem : testing::catalog_problems(
           {"sum_reduction", "mean_reduction", "max_reduction", "cross_entropy", "scaled_dot_product_attention"},
           msg::Device::CUDA)) {
    const auto corners = testing::corner_choices(problem.family, Device::cuda);
    for (const auto& choice : corners) points.push_back({problem, choice});
    if (problem.family == Family::reduction) {
      points.push_back({problem, testing::reduction_warp_choice(corners[0])});
      points.push_back({problem, testing::reduction_warp_choice(corners[1])});
    }
  }
  std::printf("evaluated %d rendered reduction, cross_entropy and attention CUDA candidates\n",
              evaluate_points(points));
}

DRK_TEST_CASE("rendered float16, bfloat16 and FP8 elementwise kernels are correct on the GPU, fused and through a workspace [gpu]") {
  if (gpu_missing()) return;
  // The chains of half_elementwise_points as a task of their own beside the catalog's (its
  // variants come with it), at an odd element count so that the scalar tail runs too.
  testing::RunDir tasks;
  tasks.write("relu_chain.yaml", R"yaml(name: relu_chain
title: "* 2 -> leaky_relu 0.1 -> tanh"
origin: "render_cuda_evaluation_test"
family: elementwise
inputs:
  - {name: x, dtype: float32, draw: {kind: normal, mean: 0.0, stddev: 1.0}}
outputs: [y]
reference: "tanh(leaky_relu(x * 2.0, 0.1))"
params:
  stages: "v * 2.0f | v > 0.0f ? v : 0.1f * v | tanhf(v)"
shapes:
  cpu: {x: [255, 4097], y: [255, 4097]}
  cuda: {x: [1000, 4099], y: [1000, 4099]}
second_shapes:
  cpu: {x: [67, 2051], y: [67, 2051]}
  cuda: {x: [1003, 4101], y: [1003, 4101]}
)yaml");
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory() + ":" + tasks.path().string());
  DRK_REQUIRE_MESSAGE(catalog.ok(), (catalog.ok() ? "" : catalog.error().message));
  auto options = cuda_options(kernels::DeviceKind::cpu, 99, std::chrono::milliseconds(4000));
  options.cache_dir = tasks.file("cache");
  auto engine = evaluator::EvaluationEngine::create(std::move(*catalog), options);
  DRK_REQUIRE_MESSAGE(engine.ok(), (engine.ok() ? "" : engine.error().message));
  const int evaluated = evaluate_points(**engine, testing::half_elementwise_points());
  DRK_CHECK(evaluated == 12);
  std::printf("evaluated %d rendered 16-bit elementwise CUDA candidates\n", evaluated);
  // FP8 bytes and scales in, bfloat16 out: decoded on the device, against the float64 reference on
  // the dequantised inputs.
  const int float8 = evaluate_points(**engine, testing::float8_elementwise_points());
  DRK_CHECK(float8 == 10);
  std::printf("evaluated %d rendered FP8 elementwise CUDA candidates\n", float8);
}

DRK_TEST_CASE("rendered float16 and bfloat16 rowwise kernels are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  const int evaluated = evaluate_points(testing::half_rowwise_points());
  DRK_CHECK(evaluated == 8);
  std::printf("evaluated %d rendered 16-bit rowwise CUDA candidates\n", evaluated);
}

DRK_TEST_CASE("rendered float16 and bfloat16 reductions are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  const int evaluated = evaluate_points(testing::half_reduction_points());
  DRK_CHECK(evaluated == 7);
  std::printf("evaluated %d rendered 16-bit reduction CUDA candidates\n", evaluated);
}

DRK_TEST_CASE("rendered float16 and bfloat16 cross-entropy kernels are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  evaluate_all(testing::half_cross_entropy_points(), "16-bit cross-entropy");
}

DRK_TEST_CASE("rendered float16 and bfloat16 batched GEMMs are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  evaluate_all(testing::half_batched_gemm_points(), "16-bit batched GEMM");
}

DRK_TEST_CASE("rendered FP8 GEMMs are correct on the GPU, kn and nk, fused and separate finishes [gpu]") {
  if (gpu_missing()) return;
  evaluate_all(testing::float8_gemm_points(), "FP8 GEMM");
}

DRK_TEST_CASE("rendered float16 and bfloat16 matmuls are correct on the GPU with CUDA cores and with tensor cores [gpu]") {
  if (gpu_missing()) return;
  int evaluated = 0;
  auto points = testing::half_matmul_points();
  for (auto& point : testing::brain_matmul_points()) points.push_back(std::move(point));
  compile_all_ahead(*published_shapes_engine(), points);
  for (const auto& point : points) {
    DRK_INFO(point.problem.task << ": " << point.choice.describe());
    const auto outcome = evaluate_point(*published_shapes_engine(), point, evaluated++);
    const auto result = outcome->result;
    const auto evidence = result.getEvidence();
    // Copies: the captured text is printed when a check fails, after these readers are gone.
    const std::string compile_log = result.getCompileLog().cStr();
    const std::string error_text = result.getErrorText().cStr();
    const std::string second_shape = evidence.getSecondShapeWrong().cStr();
    DRK_INFO("compile log: " << compile_log);
    DRK_INFO("error text: " << error_text << "; second shape: " << second_shape << "; max abs error "
                            << result.getMaxAbsError() << " precision error " << evidence.getPrecisionError()
                            << " (reference " << evidence.getReferencePrecisionError() << ")");
    DRK_CHECK(result.getCompiled());
    DRK_CHECK(result.getSandbox() == msg::SandboxOutcome::OK);
    DRK_CHECK(result.getCorrect());
    DRK_CHECK(evidence.getCudaError().size() == 0);
    DRK_CHECK(evidence.getSecondShapeChecked());
    DRK_CHECK(evidence.getSecondShapeWrong().size() == 0);
    DRK_CHECK(evidence.getPrecisionChecked());
    // Float32 accumulation rounded once to the 16-bit type, like the reference: the Verifier's budget.
    DRK_CHECK(evidence.getPrecisionError() <= std::max(64.0 * evidence.getReferencePrecisionError(), 1.0 / 65536.0));
    DRK_CHECK(result.getGpu().getCoverage() == doctest::Approx(1.0));
    std::printf("%s: %s: %.1f us (reference %.1f us)\n", point.problem.task.c_str(), point.choice.describe().c_str(),
                result.getCandidateTiming().getMedianUs(), result.getReferenceTiming().getMedianUs());
  }
  DRK_CHECK(evaluated == 16);
  std::printf("evaluated %d rendered float16 and bfloat16 CUDA matmuls\n", evaluated);
}

}  // namespace
}  // namespace drk::schedule
