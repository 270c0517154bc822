// The records of imported KernelBench problems: the family judged by a file's name agrees with the
// family of every task we ported from that file, and a record reads back as it was written.
#include <regex>
#include <string>

#include "kernels/catalog/kernelbench_problem.h"
#include "kernels/catalog/task.h"
#include "tests/doctest_drk.h"

DRK_TEST_CASE("a problem's family, judged by its file name, is that of the task we ported from it") {
  auto catalog = drk::kernels::TaskCatalog::load(drk::kernels::TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  const std::regex origin_file("\\(([0-9]+_[^()]*)\\.py\\)");
  size_t compared = 0;
  for (const auto& task : catalog->tasks()) {
    std::smatch match;
    if (!std::regex_search(task.origin, match, origin_file)) continue;
    const std::string stem = match[1].str(), judged = drk::kernels::kernelbench_family(stem);
    DRK_CHECK_MESSAGE(judged == task.family, (stem + " -> " + judged + ", ported as " + task.family));
    ++compared;
  }
  DRK_CHECK(compared >= 25);
  DRK_CHECK(drk::kernels::kernelbench_family("5_Matrix_scalar_multiplication") == "elementwise");
  DRK_CHECK(drk::kernels::kernelbench_family("44_MiniGPTBlock") == "");
  DRK_CHECK(drk::kernels::kernelbench_family("100_ConvTranspose3d_Clamp_Min_Divide") == "");
}

DRK_TEST_CASE("a record reads back as it was written, and a damaged one is refused by name") {
  drk::kernels::KernelBenchProblem problem;
  problem.name = drk::kernels::kernelbench_task_name(2, "17_Gemm_Scale");
  problem.level = 2;
  problem.problem_id = 17;
  problem.title = "A linear layer: \"scaled\"";
  problem.source = "/data/KernelBench/level2/17_Gemm_Scale.py";
  problem.source_sha256 = std::string(64, 'a');
  problem.family = "gemm";
  problem.init_inputs = "[64,32,0.5]";
  problem.inputs = {{true, {8, 64}, "float32", ""}, {false, {}, "", "3"}};
  problem.outputs = {{true, {8, 32}, "float32", ""}};
  problem.parameters = 2080;
  problem.flops = 32768;
  problem.min_bytes = 11648;
  problem.reference_run = drk::kernels::KernelBenchReferenceRun{"cuda", 0.25, 4096, std::nullopt};
  const std::string file = "level2/17_Gemm_Scale.yaml";
  auto read = drk::kernels::parse_kernelbench_problem(drk::kernels::kernelbench_problem_yaml(problem), file);
  DRK_REQUIRE(read.ok());
  DRK_CHECK(read->name == "kernelbench/level2/17_Gemm_Scale");
  DRK_CHECK(read->title == problem.title);
  DRK_CHECK(read->init_inputs == problem.init_inputs);
  DRK_REQUIRE(read->inputs.size() == 2);
  DRK_CHECK(read->inputs[0].shape == std::vector<int64_t>{8, 64});
  DRK_CHECK(!read->inputs[1].tensor);
  DRK_CHECK(read->inputs[1].value == "3");
  DRK_CHECK(read->flops == problem.flops);
  DRK_REQUIRE(read->reference_run.has_value());
  DRK_CHECK(read->reference_run->peak_bytes == 4096);
  DRK_CHECK(read->usable());

  problem.reference_run->failure = drk::kernels::KernelBenchFailure{"forward", "CUDA out of memory"};
  auto failed = drk::kernels::parse_kernelbench_problem(drk::kernels::kernelbench_problem_yaml(problem), file);
  DRK_REQUIRE(failed.ok());
  DRK_CHECK(!failed->usable());
  DRK_CHECK(failed->reference_run->failure->message == "CUDA out of memory");

  auto damaged = drk::kernels::parse_kernelbench_problem("name: kernelbench/level2/17_Gemm_Scale\nlevel: two\n", file);
  DRK_REQUIRE(!damaged.ok());
  DRK_CHECK(damaged.error().message.find(file) != std::string::npos);
  DRK_CHECK(damaged.error().message.find("level") != std::string::npos);
}

DRK_TEST_CASE("a record's values and status read as people read them; a missing one names the fix") {
  drk::kernels::KernelBenchProblem problem;
  problem.inputs = {{true, {8, 64}, "float32", ""}, {false, {}, "", "3"}};
  DRK_CHECK(drk::kernels::kernelbench_values_text(problem.inputs) == "[8, 64] float32, 3");
  DRK_CHECK(drk::kernels::kernelbench_status_text(problem) == "ok");
  problem.reference_run = drk::kernels::KernelBenchReferenceRun{"cuda", 0.25, 0, std::nullopt};
  DRK_CHECK(drk::kernels::kernelbench_status_text(problem) == "ok, reference 0.250 ms on cuda");
  problem.reference_run->peak_bytes = 1'073'741'824;
  DRK_CHECK(drk::kernels::kernelbench_status_text(problem) == "ok, reference 0.250 ms, peak 1.07 GB on cuda");
  problem.failure = drk::kernels::KernelBenchFailure{"forward", "AttributeError: no op"};
  DRK_CHECK(drk::kernels::kernelbench_status_text(problem) == "cannot run: forward: AttributeError: no op");

  auto missing = drk::kernels::load_kernelbench_problem("/nonexistent-drk-imports", "kernelbench/level1/19_ReLU");
  DRK_REQUIRE(!missing.ok());
  DRK_CHECK(missing.error().code == drk::Errc::not_found);
  DRK_CHECK(missing.error().message.find("drk kernelbench import") != std::string::npos);
}
