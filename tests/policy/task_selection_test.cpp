// Which catalog tasks a training run works on: "all" means the tasks that run on the run's
// device (every catalog family is one the embedded policy renders); naming a task without shapes
// on the device (matmul_fp16 on cpu) fails saying where it runs, naming an unknown one fails.
#include <algorithm>

#include "actors/learner/task_selection.h"
#include "kernels/schedule/space.h"
#include "tests/doctest_drk.h"

using namespace drk;

namespace {

kernels::TaskCatalog shipped_catalog() {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  DRK_REQUIRE_MESSAGE(catalog.ok(), (catalog.ok() ? "" : catalog.error().describe()));
  return std::move(*catalog);
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

DRK_TEST_CASE("all tasks means every task that runs on the device: the policy renders every catalog family") {
  auto catalog = shipped_catalog();
  auto selection = learner::select_tasks(catalog, {}, kernels::DeviceKind::cpu);
  DRK_REQUIRE(selection.ok());
  DRK_CHECK(selection->tasks.size() + selection->other_device.size() == catalog.tasks().size());
  for (const auto& task : catalog.tasks()) {
    DRK_INFO("task " << task.name << " of family " << task.family);
    DRK_CHECK(schedule::parse_family(task.family).ok());
  }
  for (const auto* task : selection->tasks) DRK_CHECK(task->runs_on(kernels::DeviceKind::cpu));
  for (const char* name : {"conv2d", "cross_entropy", "scaled_dot_product_attention", "batched_matmul", "sum_reduction"}) {
    DRK_CHECK(std::any_of(selection->tasks.begin(), selection->tasks.end(),
                          [&](const kernels::Task* task) { return task->name == name; }));
  }
  DRK_CHECK(selection->other_device == std::vector<std::string>{"matmul_fp16"});
}

DRK_TEST_CASE("the float16 matmul is a cuda task: all tasks on cuda include it, naming it on cpu fails") {
  auto catalog = shipped_catalog();
  auto on_cuda = learner::select_tasks(catalog, {}, kernels::DeviceKind::cuda);
  DRK_REQUIRE(on_cuda.ok());
  DRK_CHECK(on_cuda->other_device.empty());
  DRK_CHECK(std::any_of(on_cuda->tasks.begin(), on_cuda->tasks.end(),
                        [](const kernels::Task* task) { return task->name == "matmul_fp16"; }));
  DRK_CHECK(learner::select_tasks(catalog, {"matmul_fp16"}, kernels::DeviceKind::cuda).ok());
  auto refused = learner::select_tasks(catalog, {"matmul", "matmul_fp16"}, kernels::DeviceKind::cpu);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_INFO(refused.error().message);
  DRK_CHECK(refused.error().code == Errc::invalid_argument);
  DRK_CHECK(refused.error().message.find("'matmul_fp16' has no cpu shapes: it runs on cuda only") != std::string::npos);
}

DRK_TEST_CASE("naming tasks selects them in the order named; an unknown name fails") {
  auto catalog = shipped_catalog();
  auto named = learner::select_tasks(catalog, {"conv2d_relu_biasadd", "relu"}, kernels::DeviceKind::cpu);
  DRK_REQUIRE(named.ok());
  DRK_REQUIRE(named->tasks.size() == 2);
  DRK_CHECK(named->tasks[0]->name == "conv2d_relu_biasadd");
  DRK_CHECK(named->tasks[1]->name == "relu");
  auto unknown = learner::select_tasks(catalog, {"relux"}, kernels::DeviceKind::cpu);
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(unknown.error().code == Errc::not_found);
  DRK_CHECK(unknown.error().message.find("experiment.tasks") != std::string::npos);
}

DRK_TEST_CASE("under the embedded policy a dtype variant it does not render is refused by name, with the reason; 16-bit elementwise, rowwise and reduction ones render") {
  auto catalog = shipped_catalog();
  auto refused = learner::select_tasks(catalog, {"relu", "conv2d@bfloat16"}, kernels::DeviceKind::cpu,
                                       learner::embedded_policy_renders());
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK_MESSAGE(refused.error().message.find("experiment.tasks: task 'conv2d@bfloat16' is a bfloat16 cpu conv2d "
                                                 "task, which the embedded policy does not render") != std::string::npos,
                    refused.error().message);
  DRK_CHECK(refused.error().message.find("language-model Generator") != std::string::npos);
  auto half = learner::select_tasks(catalog, {"matmul@float16"}, kernels::DeviceKind::cpu, learner::embedded_policy_renders());
  DRK_REQUIRE_FALSE(half.ok());
  DRK_CHECK(half.error().message.find("float16") != std::string::npos);
  // The cpu elementwise and rowwise spaces render both 16-bit dtypes.
  auto elementwise = learner::select_tasks(catalog, {"relu@bfloat16", "gelu@float16", "softmax@bfloat16"},
                                           kernels::DeviceKind::cpu, learner::embedded_policy_renders());
  DRK_REQUIRE_MESSAGE(elementwise.ok(), (elementwise.ok() ? "" : elementwise.error().message));
  DRK_CHECK(elementwise->tasks.size() == 3);
  // So does the cuda one, its gemm family on tensor cores, its rowwise and its reduction families.
  auto cuda = learner::select_tasks(
      catalog,
      {"relu@bfloat16", "gelu@float16", "matmul@float16", "softmax@bfloat16", "sum_reduction@bfloat16",
       "cross_entropy@float16"},
      kernels::DeviceKind::cuda, learner::embedded_policy_renders());
  DRK_REQUIRE_MESSAGE(cuda.ok(), (cuda.ok() ? "" : cuda.error().message));
  DRK_CHECK(cuda->tasks.size() == 6);
  // The cpu cross_entropy space renders 16-bit predictions too; its conv2d space does not.
  auto cpu_loss = learner::select_tasks(catalog, {"cross_entropy@bfloat16", "cross_entropy@float16"},
                                        kernels::DeviceKind::cpu, learner::embedded_policy_renders());
  DRK_CHECK_MESSAGE(cpu_loss.ok(), (cpu_loss.ok() ? "" : cpu_loss.error().message));
  DRK_CHECK_FALSE(learner::select_tasks(catalog, {"conv2d@bfloat16"}, kernels::DeviceKind::cpu,
                                        learner::embedded_policy_renders())
                      .ok());
  // FP8 variants: the elementwise ones render on both devices, the gemm ones on cuda; others are
  // refused by name.
  auto fp8 = learner::select_tasks(catalog, {"matmul@float8_e4m3fn"}, kernels::DeviceKind::cpu,
                                   learner::embedded_policy_renders());
  DRK_REQUIRE_FALSE(fp8.ok());
  DRK_CHECK(fp8.error().message.find("'matmul@float8_e4m3fn' is a float8_e4m3fn cpu gemm task, which the embedded "
                                     "policy does not render") != std::string::npos);
  auto fp8_gemm = learner::select_tasks(catalog, {"matmul@float8_e4m3fn", "gemm_add_relu@float8_e5m2"},
                                        kernels::DeviceKind::cuda, learner::embedded_policy_renders());
  DRK_REQUIRE_MESSAGE(fp8_gemm.ok(), (fp8_gemm.ok() ? "" : fp8_gemm.error().message));
  auto fp8_elementwise = learner::select_tasks(catalog, {"relu@float8_e4m3fn", "gelu@float8_e5m2"},
                                               kernels::DeviceKind::cpu, learner::embedded_policy_renders());
  DRK_REQUIRE_MESSAGE(fp8_elementwise.ok(), (fp8_elementwise.ok() ? "" : fp8_elementwise.error().message));
  // A language-model Generator writes any dtype: no check.
  auto written = learner::select_tasks(catalog, {"relu@bfloat16", "softmax@float16"}, kernels::DeviceKind::cpu);
  DRK_REQUIRE(written.ok());
  DRK_CHECK(written->tasks[0]->name == "relu@bfloat16");
  // tasks: all under the embedded policy: every shipped task on cpu but matmul_fp16 renders.
  auto all = learner::select_tasks(catalog, {}, kernels::DeviceKind::cpu, learner::embedded_policy_renders());
  DRK_REQUIRE(all.ok());
  DRK_CHECK(all->other_device == std::vector<std::string>{"matmul_fp16"});
  auto all_cuda = learner::select_tasks(catalog, {}, kernels::DeviceKind::cuda, learner::embedded_policy_renders());
  DRK_REQUIRE(all_cuda.ok());
  DRK_CHECK(all_cuda->other_device.empty());
}

DRK_TEST_CASE("a step plays tasks_per_step tasks in a seeded turn that plays every task equally often") {
  // 0, or as many as there are: every task, in order.
  DRK_CHECK(learner::tasks_of_step(4, 0, 9, 3) == std::vector<size_t>{0, 1, 2, 3});
  DRK_CHECK(learner::tasks_of_step(4, 7, 9, 3) == std::vector<size_t>{0, 1, 2, 3});
  std::vector<size_t> played(10, 0);
  for (uint64_t step = 0; step < 5; ++step) {
    const auto chosen = learner::tasks_of_step(10, 4, 9, step);
    DRK_REQUIRE(chosen.size() == 4);
    DRK_CHECK(chosen == learner::tasks_of_step(10, 4, 9, step));  // a restarted Learner plays the same
    for (size_t index : chosen) ++played[index];
  }
  // 5 steps of 4 out of 10: every task exactly twice.
  for (size_t count : played) DRK_CHECK(count == 2);
  DRK_CHECK(learner::tasks_of_step(10, 4, 9, 0) != learner::tasks_of_step(10, 4, 10, 0));
}
