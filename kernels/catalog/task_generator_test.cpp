// The task generator draws valid, distinct tasks of every family it knows, deterministically;
// the writer keeps them, drops a degenerate or malformed draft with its reason, and never
// overwrites; the catalog loads generated tasks beside the ported ones.
#include "kernels/catalog/task_generator.h"

#include <filesystem>
#include <set>

#include "kernels/catalog/generated_task_writer.h"
#include "kernels/catalog/task.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using namespace drk::kernels;
using drk::testing::RunDir;

DRK_TEST_CASE("generated tasks are distinct, deterministic in the seed, and cover the families asked for") {
  TaskGeneratorOptions options;
  options.seed = 11;
  options.count = 24;
  auto first = generate_tasks(options);
  auto again = generate_tasks(options);
  DRK_REQUIRE(first.ok());
  DRK_REQUIRE(again.ok());
  DRK_REQUIRE(first->size() == 24);
  std::set<std::string> names, families, yamls;
  for (size_t i = 0; i < first->size(); ++i) {
    DRK_CHECK((*first)[i].yaml == (*again)[i].yaml);
    names.insert((*first)[i].name);
    families.insert((*first)[i].family);
    yamls.insert((*first)[i].yaml.substr((*first)[i].yaml.find("\nreference")));
  }
  DRK_CHECK(names.size() == 24);
  DRK_CHECK(yamls.size() == 24);
  DRK_CHECK(families == std::set<std::string>(generated_families().begin(), generated_families().end()));
  options.seed = 12;
  auto other = generate_tasks(options);
  DRK_REQUIRE(other.ok());
  size_t same = 0;
  for (size_t i = 0; i < other->size(); ++i) same += (*other)[i].yaml == (*first)[i].yaml;
  DRK_CHECK(same < 24);

  options.families = {"gemm"};
  auto gemms = generate_tasks(options);
  DRK_REQUIRE(gemms.ok());
  for (const auto& task : *gemms) DRK_CHECK(task.family == "gemm");
}

DRK_TEST_CASE("every generated task loads, runs on both devices with second shapes, and passes the audit") {
  RunDir dir;
  TaskGeneratorOptions options;
  options.seed = 3;
  options.count = 40;
  auto drafts = generate_tasks(options);
  DRK_REQUIRE(drafts.ok());
  size_t heard = 0;
  auto written = write_generated_tasks(*drafts, dir.file("generated"), {}, [&](const WrittenTask&) { ++heard; });
  DRK_REQUIRE_MESSAGE(written.ok(), (written.ok() ? "" : written.error().describe()));
  DRK_CHECK(heard == drafts->size());
  for (const auto& task : *written) {
    DRK_CHECK_MESSAGE(task.kept, task.draft.name << ": " << task.reason << "\n" << task.draft.yaml);
  }
  // Beside the ported tasks, as a run's experiment.tasks_dir names them.
  auto catalog = TaskCatalog::load(TaskCatalog::default_directory() + ":" + dir.file("generated"));
  DRK_REQUIRE_MESSAGE(catalog.ok(), (catalog.ok() ? "" : catalog.error().describe()));
  auto ported = TaskCatalog::load(TaskCatalog::default_directory());
  DRK_REQUIRE(ported.ok());
  DRK_CHECK(catalog->tasks().size() == ported->tasks().size() + 40);
  for (const auto& draft : *drafts) {
    auto task = catalog->find(draft.name);
    DRK_REQUIRE(task.ok());
    DRK_CHECK((*task)->runs_on(DeviceKind::cpu));
    DRK_CHECK((*task)->runs_on(DeviceKind::cuda));
    DRK_CHECK(!(*task)->second_shapes(DeviceKind::cpu).empty());
    DRK_CHECK(!(*task)->second_shapes(DeviceKind::cuda).empty());
    DRK_CHECK(estimate_flops(**task, DeviceKind::cpu) > 0.0);
    DRK_CHECK(catalog->find(draft.name + "@bfloat16").ok());
  }
}

DRK_TEST_CASE("with shape ranges, every generated task declares one per device up to its own shapes") {
  RunDir dir;
  TaskGeneratorOptions options;
  options.seed = 4;
  options.count = 12;
  options.shape_ranges = true;
  auto drafts = generate_tasks(options);
  DRK_REQUIRE(drafts.ok());
  auto written = write_generated_tasks(*drafts, dir.path().string());
  DRK_REQUIRE(written.ok());
  for (const auto& generated : *written) {
    DRK_REQUIRE_MESSAGE(generated.kept, generated.draft.name << ": " << generated.reason << "\n" << generated.draft.yaml);
    auto task = load_task_file(generated.path);
    DRK_REQUIRE(task.ok());
    for (auto device : {DeviceKind::cpu, DeviceKind::cuda}) {
      const ShapeRange* range = task->shape_range(device);
      DRK_REQUIRE(range != nullptr);
      DRK_CHECK(range->draws == 3);
      DRK_CHECK(range->largest() == task->shapes(device));
      for (const auto& [name, values] : range->dims) DRK_CHECK(values.smallest() == 1);
    }
  }
}

DRK_TEST_CASE("the writer drops a degenerate or malformed draft with its reason and never overwrites") {
  RunDir dir;
  TaskGeneratorOptions options;
  options.count = 1;
  options.families = {"elementwise"};
  auto drafts = generate_tasks(options);
  DRK_REQUIRE(drafts.ok());
  GeneratedTask constant = (*drafts)[0];
  constant.name = "gen_constant";
  const size_t reference = constant.yaml.find("reference: ");
  constant.yaml.replace(reference, constant.yaml.find('\n', reference) - reference, "reference: \"relu(x) * 0.0 + 1.0\"");
  constant.yaml.replace(constant.yaml.find("name: "), constant.yaml.find('\n', constant.yaml.find("name: ")) - constant.yaml.find("name: "), "name: gen_constant");
  GeneratedTask malformed = (*drafts)[0];
  malformed.name = "gen_malformed";
  malformed.yaml = "name: gen_malformed\nfamily: elementwise\n";
  auto written = write_generated_tasks({(*drafts)[0], constant, malformed}, dir.path().string());
  DRK_REQUIRE(written.ok());
  DRK_REQUIRE(written->size() == 3);
  DRK_CHECK((*written)[0].kept);
  DRK_CHECK(std::filesystem::exists((*written)[0].path));
  DRK_CHECK(!(*written)[1].kept);
  DRK_CHECK_MESSAGE((*written)[1].reason.find("degenerate") != std::string::npos, (*written)[1].reason);
  DRK_CHECK(!std::filesystem::exists((*written)[1].path));
  DRK_CHECK(!(*written)[2].kept);
  DRK_CHECK_MESSAGE((*written)[2].reason.find("missing key") != std::string::npos, (*written)[2].reason);

  auto again = write_generated_tasks(*drafts, dir.path().string());
  DRK_REQUIRE(!again.ok());
  DRK_CHECK(again.error().message.find("exists already") != std::string::npos);
}

DRK_TEST_CASE("generation refuses an unknown family or a count of 0, naming what it can do") {
  TaskGeneratorOptions options;
  options.families = {"conv3d"};
  auto unknown = generate_tasks(options);
  DRK_REQUIRE(!unknown.ok());
  DRK_CHECK(unknown.error().message.find("'conv3d' cannot be generated") != std::string::npos);
  DRK_CHECK(unknown.error().message.find("elementwise, gemm, rowwise, reduction") != std::string::npos);
  options = {};
  options.count = 0;
  DRK_CHECK(!generate_tasks(options).ok());
}

DRK_TEST_CASE("two task directories that declare the same name are refused, naming both files") {
  RunDir dir;
  std::filesystem::create_directories(dir.file("a"));
  std::filesystem::create_directories(dir.file("b"));
  std::filesystem::copy_file(TaskCatalog::default_directory() + "/relu.yaml", dir.file("a") + "/relu.yaml");
  std::filesystem::copy_file(TaskCatalog::default_directory() + "/relu.yaml", dir.file("b") + "/relu.yaml");
  auto catalog = TaskCatalog::load(dir.file("a") + ":" + dir.file("b"));
  DRK_REQUIRE(!catalog.ok());
  DRK_CHECK_MESSAGE(catalog.error().message.find(dir.file("b") + "/relu.yaml: task 'relu' is already declared by") != std::string::npos, catalog.error().message);
  DRK_CHECK(catalog.error().message.find(dir.file("a") + "/relu.yaml") != std::string::npos);
  auto missing = TaskCatalog::load(dir.file("a") + ":" + dir.file("nowhere"));
  DRK_REQUIRE(!missing.ok());
  DRK_CHECK(missing.error().message.find("nowhere' does not exist") != std::string::npos);
}
