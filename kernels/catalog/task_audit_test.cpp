// The task audit flags a synthetic task whose output ignores an input, and one whose output is
// constant, leaves real tasks of the catalog alone, and audits float16 tasks on their device.
#include "kernels/catalog/task_audit.h"

#include "tests/doctest_drk.h"

using namespace drk::kernels;

namespace {

Task synthetic(const std::string& reference) {
  Task task;
  task.name = "synthetic";
  task.family = "elementwise";
  task.inputs = {InputSpec{"x", DType::float32, {}}, InputSpec{"z", DType::float32, {}}};
  task.outputs = {"y"};
  task.reference = reference;
  for (auto* shapes : {&task.cpu_shapes, &task.gpu_shapes})
    *shapes = {{"x", {16, 32}}, {"z", {16, 32}}, {"y", {16, 32}}};
  return task;
}

}  // namespace

DRK_TEST_CASE("an input the output does not depend on is flagged by name") {
  // relu(-relu(z)) is always 0: z cannot matter.
  auto audit = audit_task(synthetic("relu(x) + relu(-relu(z))"), DeviceKind::cpu);
  DRK_REQUIRE(audit.ok());
  DRK_CHECK(audit->degenerate());
  DRK_REQUIRE(audit->inputs.size() == 2);
  DRK_CHECK(audit->inputs[0].changed_fraction > 0.1);
  DRK_CHECK(audit->inputs[1].changed_fraction == 0.0);
  DRK_REQUIRE(audit->findings.size() == 1);
  DRK_CHECK(audit->findings[0].find("input 'z' has no influence") != std::string::npos);
}

DRK_TEST_CASE("an output that is constant across draws is flagged") {
  auto audit = audit_task(synthetic("relu(x) * 0.0 + z * 0.0 + 1.0"), DeviceKind::cpu);
  DRK_REQUIRE(audit.ok());
  DRK_CHECK(audit->replay_pass_fraction == 1.0);
  DRK_CHECK(audit->max_spread == 0.0);
  DRK_REQUIRE(audit->findings.size() == 3);  // constant, and neither input matters
  DRK_CHECK(audit->findings[0].find("near-constant") != std::string::npos);
}

DRK_TEST_CASE("real tasks are not degenerate") {
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  for (const char* name : {"relu", "gemm_relu_divide", "cross_entropy"}) {
    DRK_INFO("task " << name);
    auto task = catalog->find(name);
    DRK_REQUIRE(task.ok());
    auto audit = audit_task(**task, DeviceKind::cpu);
    DRK_REQUIRE(audit.ok());
    DRK_CHECK_FALSE(audit->degenerate());
    DRK_CHECK(audit->replay_pass_fraction < 1.0);
    for (const auto& input : audit->inputs) DRK_CHECK(input.changed_fraction > 0.0);
  }
}

DRK_TEST_CASE("a float16 task is audited at the shapes of its device only, in its float16 tolerance") {
  Task task;
  task.name = "half_matmul";
  task.family = "gemm";
  task.inputs = {InputSpec{"a", DType::float16, {}}, InputSpec{"b", DType::float16, {}}};
  task.outputs = {"y"};
  task.output_dtype = DType::float16;
  task.reference = "matmul(a, b)";
  task.gpu_shapes = {{"a", {8, 32}}, {"b", {32, 8}}, {"y", {8, 8}}};
  auto audit = audit_task(task, DeviceKind::cuda);
  DRK_REQUIRE_MESSAGE(audit.ok(), (audit.ok() ? "" : audit.error().message));
  DRK_CHECK_FALSE(audit->degenerate());
  DRK_CHECK(audit->output_elements == 64);
  auto refused = audit_task(task, DeviceKind::cpu);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().message.find("'half_matmul' has no cpu shapes: it runs on cuda only") != std::string::npos);
}

DRK_TEST_CASE("an audit needs two draws") {
  AuditOptions options;
  options.draws = 1;
  DRK_CHECK_FALSE(audit_task(synthetic("x + z"), DeviceKind::cpu, options).ok());
}
