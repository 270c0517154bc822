#include "tools/drk/kernelbench_candidates.h"

#include <string>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using drk::testing::RunDir;
using drk::tools::find_kernelbench_candidates;
using drk::tools::KernelBenchCandidate;

namespace {

std::string describe(const KernelBenchCandidate& c) {
  return std::to_string(c.level) + "/" + std::to_string(c.problem_id) + "/" + std::to_string(c.sample_id);
}

}  // namespace

DRK_TEST_CASE("KernelBench's generation files and a problem tree are read, each file a sample of its problem") {
  RunDir dir;
  dir.write("level_1_problem_19_sample_0_kernel.py", "");
  dir.write("level_1_problem_19_sample_3_kernel.py", "");
  dir.write("level2/7_Linear_GELU_Scale.py", "");
  dir.write("level2/7_Linear_GELU_Scale_v2.py", "");
  dir.write("level2/notes.py", "");
  dir.write("eval_results.json", "{}");
  auto run = find_kernelbench_candidates(dir.path().string(), {});
  DRK_REQUIRE(run);
  DRK_REQUIRE(run->candidates.size() == 4);
  DRK_CHECK(describe(run->candidates[0]) == "1/19/0");
  DRK_CHECK(describe(run->candidates[1]) == "1/19/3");
  DRK_CHECK(describe(run->candidates[2]) == "2/7/0");
  DRK_CHECK(describe(run->candidates[3]) == "2/7/1");
  DRK_CHECK(run->candidates[3].path == dir.file("level2/7_Linear_GELU_Scale_v2.py"));
  DRK_REQUIRE(run->ignored.size() == 1);
  DRK_CHECK(run->ignored[0] == dir.file("level2/notes.py"));

  auto level_two = find_kernelbench_candidates(dir.path().string(), {2});
  DRK_REQUIRE(level_two);
  DRK_CHECK(level_two->candidates.size() == 2);
}

DRK_TEST_CASE("flat ID_Name.py candidates take their level from the folder's name or the one --level") {
  RunDir dir;
  dir.write("level3/5_Conv.py", "");
  auto named = find_kernelbench_candidates(dir.file("level3") + "/", {});
  DRK_REQUIRE(named);
  DRK_CHECK(describe(named->candidates.at(0)) == "3/5/0");

  dir.write("flat/5_Conv.py", "");
  auto unknown = find_kernelbench_candidates(dir.file("flat"), {});
  DRK_REQUIRE_FALSE(unknown);
  DRK_CHECK(unknown.error().message.find("--level") != std::string::npos);
  auto given = find_kernelbench_candidates(dir.file("flat"), {2});
  DRK_REQUIRE(given);
  DRK_CHECK(describe(given->candidates.at(0)) == "2/5/0");
}

DRK_TEST_CASE("a run directory that is missing, empty or names a sample twice says so with the layouts") {
  RunDir dir;
  auto missing = find_kernelbench_candidates(dir.file("nowhere"), {});
  DRK_REQUIRE_FALSE(missing);
  DRK_CHECK(missing.error().message.find(dir.file("nowhere")) != std::string::npos);
  DRK_CHECK(missing.error().message.find("level_<L>_problem_<P>_sample_<S>_kernel.py") != std::string::npos);

  dir.write("empty/readme.txt", "");
  auto empty = find_kernelbench_candidates(dir.file("empty"), {});
  DRK_REQUIRE_FALSE(empty);
  DRK_CHECK(empty.error().message.find("holds no candidate") != std::string::npos);

  dir.write("twice/level_1_problem_4_sample_0_kernel.py", "");
  dir.write("twice/level1/4_Matmul.py", "");
  auto twice = find_kernelbench_candidates(dir.file("twice"), {});
  DRK_REQUIRE_FALSE(twice);
  DRK_CHECK(twice.error().message.find("both sample 0 of level 1 problem 4") != std::string::npos);
}
