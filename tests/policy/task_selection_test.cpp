// Which catalog tasks a training run works on: "all" means the tasks of families the embedded
// policy renders (the others are named as skipped); naming a task of another family fails with
// the task, its family and the families the policy renders.
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

DRK_TEST_CASE("all tasks means the tasks the embedded policy renders; the others are skipped by name") {
  auto catalog = shipped_catalog();
  auto selection = learner::select_tasks(catalog, {});
  DRK_REQUIRE(selection.ok());
  DRK_CHECK(selection->tasks.size() + selection->skipped.size() == catalog.tasks().size());
  for (const auto* task : selection->tasks) {
    DRK_INFO("task " << task->name);
    DRK_CHECK(schedule::parse_family(task->family).ok());
  }
  for (const char* name : {"conv2d", "cross_entropy", "scaled_dot_product_attention", "batched_matmul", "sum_reduction"})
    DRK_CHECK(contains(selection->skipped, name));
  DRK_CHECK_FALSE(contains(selection->skipped, "relu"));
}

DRK_TEST_CASE("naming a task of a family the policy does not render fails, naming the task and the families") {
  auto catalog = shipped_catalog();
  auto named = learner::select_tasks(catalog, {"relu", "softmax"});
  DRK_REQUIRE(named.ok());
  DRK_CHECK(named->tasks.size() == 2);
  DRK_CHECK(named->skipped.empty());
  auto refused = learner::select_tasks(catalog, {"relu", "conv2d_relu_biasadd"});
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_INFO(refused.error().message);
  DRK_CHECK(refused.error().code == Errc::invalid_argument);
  DRK_CHECK(refused.error().message.find("'conv2d_relu_biasadd' is of family conv2d") != std::string::npos);
  DRK_CHECK(refused.error().message.find("elementwise, rowwise, gemm") != std::string::npos);
  auto unknown = learner::select_tasks(catalog, {"relux"});
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(unknown.error().code == Errc::not_found);
}
