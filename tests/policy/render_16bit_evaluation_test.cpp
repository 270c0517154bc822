// The cpu elementwise, rowwise and reduction spaces render float16 and bfloat16 kernels: widened
// to float32 on load, rounded once on store; the elementwise one FP8 kernels too (bytes through a
// scaled table, bfloat16 out). Rendered for catalog variants (fused, unfused, every vector width) and
// evaluated by the real engine against LibTorch's reference in the variant's dtype, they are
// correct and honest; the policy's observation says which dtype a task is.
#include <capnp/message.h>

#include "actors/evaluator/evaluation.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/problem.h"
#include "kernels/schedule/render.h"
#include "tests/doctest_drk.h"
#include "tests/support/test_engine.h"

using namespace drk;

namespace {

evaluator::EngineOptions quick_options() {
  evaluator::EngineOptions options;
  options.trials = 2;
  options.seed = 77;
  options.timing_budget_ms = 10;
  options.min_samples = 3;
  return options;
}

schedule::Problem problem_of(const kernels::TaskCatalog& catalog, const std::string& name) {
  auto task = catalog.find(name);
  DRK_REQUIRE_MESSAGE(task.ok(), (task.ok() ? "" : task.error().message));
  capnp::MallocMessageBuilder builder;
  auto message = builder.initRoot<msg::Task>();
  kernels::fill_task_message(**task, kernels::DeviceKind::cpu, message);
  auto problem = schedule::problem_from_task(message.asReader());
  DRK_REQUIRE_MESSAGE(problem.ok(), (problem.ok() ? "" : problem.error().message));
  return *problem;
}

// Renders each (task, options) point of `family`'s cpu space and evaluates it with the real
// engine: it must compile, pass every trial (the second shapes too) and be timed.
void evaluate_rendered(schedule::Family family,
                       const std::vector<std::pair<std::string, std::vector<uint16_t>>>& cases) {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  drk::testing::TestEngine engine("render-16bit", quick_options());
  for (const auto& [name, options] : cases) {
    const schedule::Problem problem = problem_of(*catalog, name);
    const schedule::Choice choice{family, options, schedule::Device::cpu};
    auto source = schedule::render(problem, choice);
    DRK_REQUIRE_MESSAGE(source.ok(), name << ": " << (source.ok() ? "" : source.error().message));
    capnp::MallocMessageBuilder message;
    auto out = message.initRoot<msg::EvalResult>();
    auto status = engine->evaluate(
        evaluator::CandidateInput{"render-16bit/" + name, name, kernels::DeviceKind::cpu, *source}, out);
    DRK_REQUIRE_MESSAGE(status.ok(), (status.ok() ? "" : status.error().message));
    const std::string error_text = out.getErrorText().cStr();
    const std::string compile_log = out.getCompileLog().cStr();
    DRK_INFO(name << " " << choice.describe() << ": " << error_text << compile_log);
    DRK_CHECK(out.getCompiled());
    DRK_CHECK(out.getCorrect());
    DRK_CHECK(out.getTrialsPassed() == 2);
    DRK_CHECK(out.getEvidence().getSecondShapeWrong().size() == 0);
    DRK_CHECK(out.getSpeedup() > 0);
  }
}

}  // namespace

DRK_TEST_CASE("16-bit elementwise kernels rendered by the cpu space are correct and honest against LibTorch") {
  // fusion (fused, unfused) x vector_width (1, 4, 8, 16) spread over the tasks; chunk 1024 and
  // 2 threads so that chunks meet their ends inside a vector group.
  evaluate_rendered(schedule::Family::elementwise,
                    {
                        {"relu@bfloat16", {0, 0, 0, 1}},     {"relu@float16", {1, 1, 0, 1}},
                        {"gelu@float16", {0, 2, 0, 1}},      {"gelu@bfloat16", {1, 3, 0, 1}},
                        {"swish@bfloat16", {1, 1, 0, 1}},    {"softplus@float16", {0, 3, 0, 1}},
                        {"hardtanh@bfloat16", {0, 2, 0, 1}}, {"leaky_relu@float16", {1, 0, 0, 1}},
                    });
}

DRK_TEST_CASE("16-bit rowwise kernels rendered by the cpu space are correct and honest against LibTorch") {
  // passes (three_pass, two_pass) x vector_width (1, 4, 8) x inner_tile (16, 64, 256) spread over
  // the four ops; 2 threads. rms_norm reduces dim 1 of [B, C, H, W]: strided tiles (inner > 1).
  evaluate_rendered(schedule::Family::rowwise,
                    {
                        {"softmax@bfloat16", {0, 1, 0, 1}},     {"softmax@float16", {1, 2, 0, 1}},
                        {"log_softmax@bfloat16", {1, 0, 0, 1}}, {"layer_norm@bfloat16", {0, 2, 0, 1}},
                        {"layer_norm@float16", {1, 1, 0, 1}},   {"rms_norm@float16", {0, 1, 0, 1}},
                        {"rms_norm@bfloat16", {1, 2, 2, 1}},
                    });
}

DRK_TEST_CASE("16-bit reductions rendered by the cpu space are correct and honest against LibTorch") {
  // strategy (per_output, accumulate_rows) x vector_width (1, 4, 8) x inner_tile over sum, mean
  // and max; 2 threads; float32 accumulators, one rounding per output.
  evaluate_rendered(schedule::Family::reduction,
                    {
                        {"sum_reduction@bfloat16", {0, 1, 0, 1}},  {"sum_reduction@float16", {1, 2, 1, 1}},
                        {"mean_reduction@bfloat16", {1, 1, 2, 1}}, {"mean_reduction@float16", {0, 0, 0, 1}},
                        {"max_reduction@bfloat16", {1, 0, 1, 1}},  {"max_reduction@float16", {0, 2, 2, 1}},
                    });
}

DRK_TEST_CASE("16-bit cross-entropy rendered by the cpu space is correct and honest against LibTorch") {
  // passes (three_pass, online) x vector_width (1, 4, 8) x rows_per_item (1, 8, 64); 2 threads:
  // predictions widened as read, the loss rounded once.
  evaluate_rendered(schedule::Family::cross_entropy,
                    {
                        {"cross_entropy@bfloat16", {0, 0, 0, 1}}, {"cross_entropy@bfloat16", {1, 2, 2, 1}},
                        {"cross_entropy@float16", {1, 1, 1, 1}},  {"cross_entropy@float16", {0, 2, 2, 1}},
                    });
}

DRK_TEST_CASE("16-bit attention rendered by the cpu space is correct and honest against LibTorch") {
  // algorithm (materialize, online) x key_tile x vector_width; 2 threads: q, k, v widened as read,
  // scores, softmax and the accumulator in float32, each output rounded once.
  evaluate_rendered(schedule::Family::attention,
                    {
                        {"scaled_dot_product_attention@bfloat16", {0, 0, 0, 1}},
                        {"scaled_dot_product_attention@bfloat16", {1, 2, 2, 1}},
                        {"scaled_dot_product_attention@float16", {1, 1, 1, 1}},
                        {"scaled_dot_product_attention@float16", {0, 2, 2, 1}},
                    });
}

DRK_TEST_CASE("FP8 elementwise kernels rendered by the cpu space read bytes and a scale and are correct against the float64 reference") {
  // Both formats, fused and unfused (through the float32 workspace), vector widths 1 to 16.
  evaluate_rendered(schedule::Family::elementwise,
                    {
                        {"relu@float8_e4m3fn", {0, 0, 0, 1}}, {"relu@float8_e5m2", {1, 1, 0, 1}},
                        {"gelu@float8_e4m3fn", {0, 2, 0, 1}}, {"swish@float8_e5m2", {1, 3, 0, 1}},
                        {"hardtanh@float8_e4m3fn", {0, 3, 0, 1}},
                    });
}

DRK_TEST_CASE("the observation tells float32, float16, bfloat16 and FP8 elementwise tasks apart; other 16-bit and FP8 cpu tasks are refused") {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const auto plain = schedule::observe(problem_of(*catalog, "relu"), 1, 2, std::nullopt);
  const auto half = schedule::observe(problem_of(*catalog, "relu@float16"), 1, 2, std::nullopt);
  const auto brain = schedule::observe(problem_of(*catalog, "relu@bfloat16"), 1, 2, std::nullopt);
  const auto float8 = schedule::observe(problem_of(*catalog, "relu@float8_e4m3fn"), 1, 2, std::nullopt);
  DRK_CHECK(plain != half);
  DRK_CHECK(plain != brain);
  DRK_CHECK(half != brain);
  DRK_CHECK(float8 != brain);
  DRK_CHECK(float8 != plain);
  // A 16-bit or FP8 task the cpu space does not render is refused by name.
  for (const auto& [name, says] :
       {std::pair{"conv2d@bfloat16", "bfloat16 cpu conv2d task, which the embedded policy does not render"},
        {"matmul@float8_e4m3fn", "float8_e4m3fn cpu gemm task, which the embedded policy does not render"}}) {
    auto task = catalog->find(name);
    DRK_REQUIRE(task.ok());
    capnp::MallocMessageBuilder builder;
    auto message = builder.initRoot<msg::Task>();
    kernels::fill_task_message(**task, kernels::DeviceKind::cpu, message);
    auto refused = schedule::problem_from_task(message.asReader());
    DRK_REQUIRE_FALSE(refused.ok());
    DRK_CHECK_MESSAGE(refused.error().message.find(says) != std::string::npos, refused.error().message);
  }
}
