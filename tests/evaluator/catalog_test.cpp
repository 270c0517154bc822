// The task catalog: every shipped task loads and its reference yields the declared shapes;
// malformed files and expressions fail with errors that say where.


#include <capnp/message.h>

#include "kernels/catalog/expression.h"
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

}  // namespace

DRK_TEST_CASE("every shipped task loads and its reference yields the declared output shape") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE_MESSAGE(catalog.ok(), (catalog.ok() ? "" : catalog.error().message));
  DRK_CHECK(catalog->tasks().size() >= 10);
  for (const auto& task : catalog->tasks()) {
    DRK_INFO("task " << task.name);
    auto reference = Reference::create(task);
    DRK_REQUIRE(reference.ok());
    auto output = reference->run(draw_inputs(task, DeviceKind::cpu, 7));
    DRK_REQUIRE(output.ok());
    DRK_CHECK(Shape(output->sizes().begin(), output->sizes().end()) == task.cpu_shapes.at(task.outputs[0]));
    DRK_CHECK(estimate_flops(task, DeviceKind::cuda) > 0);
    DRK_CHECK(estimate_min_bytes(task, DeviceKind::cpu) > 0);
  }
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
