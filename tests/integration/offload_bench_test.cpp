// tools/scripts/offload-bench.sh as a user runs it, on the CPU: both sides of the compile-offload
// benchmark (every actor on the head; the Generators on a `drk node` joined over loopback, compiling
// ahead) complete a small training run with taskset splitting the cores, and the offload side's
// Evaluator compiles nothing itself. The configurations place the actors as the benchmark says,
// and a malformed command line is refused, saying why.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"

namespace {

using drk::testing::Ran;
using drk::testing::RunDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kBench = std::string(DRK_SOURCE_DIR) + "/tools/scripts/offload-bench.sh";
const std::string kConfigs = std::string(DRK_SOURCE_DIR) + "/configs/bench/";

Ran run(const std::vector<std::string>& arguments) {
  RunDir dir;
  return drk::testing::run_program(dir, arguments.front(), {arguments.begin() + 1, arguments.end()});
}

// The words of one side's rate file: side, evaluations, span, per hour, wall, busy, wait, compiled here.
std::vector<std::string> rate_words(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

DRK_TEST_CASE("the offload configurations put every actor on the head, or the Generators on cpu1 compiling ahead") {
  const Ran local = run({DRK_BINARY, "run", "--dry-run", kConfigs + "offload-local.yaml"});
  DRK_CHECK_MESSAGE(local.exit_code == 0, local.output);
  DRK_CHECK_MESSAGE(contains(local.output, "#   generator.0: node head"), local.output);
  DRK_CHECK_FALSE(contains(local.output, "compile_ahead: true"));
  const Ran offload = run({DRK_BINARY, "run", "--dry-run", kConfigs + "offload-cpu-node.yaml"});
  DRK_CHECK_MESSAGE(offload.exit_code == 0, offload.output);
  DRK_CHECK_MESSAGE(contains(offload.output, "#   generator.0: node cpu1"), offload.output);
  DRK_CHECK_MESSAGE(contains(offload.output, "#   generator.1: node cpu1"), offload.output);
  DRK_CHECK_MESSAGE(contains(offload.output, "#   evaluator.0: node head, GPU 0"), offload.output);
  DRK_CHECK_MESSAGE(contains(offload.output, "compile_ahead: true"), offload.output);
}

DRK_TEST_CASE("the offload benchmark runs both sides on the CPU; offloaded, the Evaluator compiles nothing") {
  RunDir runs;
  const Ran ran = run({"/bin/bash", kBench, "--drk", DRK_BINARY, "--steps", "1", "--runs", runs.file("runs"), "--set",
                       "experiment.device=cpu", "--set", "experiment.tasks=[relu,gelu]", "--set",
                       "experiment.group_size=2", "--set", "experiment.turns=1"});
  DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
  DRK_CHECK_MESSAGE(contains(ran.output, "offloaded / local: "), ran.output);
  const auto local = rate_words(runs.file("runs/local.rate"));
  const auto offload = rate_words(runs.file("runs/offload.rate"));
  DRK_REQUIRE_MESSAGE(local.size() == 8, ran.output);
  DRK_REQUIRE_MESSAGE(offload.size() == 8, ran.output);
  // 2 tasks x group 2 x 1 turn, each evaluated once.
  DRK_CHECK(local[1] == "4");
  DRK_CHECK(offload[1] == "4");
  // No GPU sampled here; the offload side's objects came from cpu1, checked and used.
  DRK_CHECK(local[5] == "n/a");
  DRK_CHECK(offload[7] == "0");
  DRK_CHECK_MESSAGE(contains(runs.read("runs/node-cpu1.log"), "drk node cpu1: the run is over"),
                    runs.read("runs/node-cpu1.log"));
}

DRK_TEST_CASE("the offload benchmark refuses a malformed command line, saying why") {
  const Ran only = run({"/bin/bash", kBench, "--only", "both"});
  DRK_CHECK(only.exit_code == 2);
  DRK_CHECK_MESSAGE(contains(only.output, "--only must be local or offload, got 'both'"), only.output);
  const Ran steps = run({"/bin/bash", kBench, "--steps", "0"});
  DRK_CHECK(steps.exit_code == 2);
  DRK_CHECK_MESSAGE(contains(steps.output, "--steps must be a positive integer"), steps.output);
  const Ran unknown = run({"/bin/bash", kBench, "--gpus", "2"});
  DRK_CHECK(unknown.exit_code == 2);
  DRK_CHECK_MESSAGE(contains(unknown.output, "unknown argument '--gpus'"), unknown.output);
  DRK_CHECK(run({"/bin/bash", kBench, "--help"}).exit_code == 0);
}
