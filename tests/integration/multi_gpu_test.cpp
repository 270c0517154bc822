// Several GPUs of one machine as a user meets them without a GPU: `drk run --dry-run` shows
// `gpus: all` expanded from CUDA_VISIBLE_DEVICES, and tools/scripts/multi-gpu-bench.sh refuses a
// machine that does not show two GPUs, or a malformed command line, saying why.
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"

namespace {

using drk::testing::Ran;
using drk::testing::RunDir;

// `arguments` under /usr/bin/env with CUDA_VISIBLE_DEVICES as given: the GPUs the program sees,
// whatever this machine has.
Ran run_seeing(const std::string& visible_devices, const std::vector<std::string>& arguments) {
  RunDir dir;
  std::vector<std::string> argv{"CUDA_VISIBLE_DEVICES=" + visible_devices};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return drk::testing::run_program(dir, "/usr/bin/env", argv);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kBench = std::string(DRK_SOURCE_DIR) + "/tools/scripts/multi-gpu-bench.sh";
const std::string kTwoGpus = std::string(DRK_SOURCE_DIR) + "/configs/bench/multi-gpu-2.yaml";

}  // namespace

DRK_TEST_CASE("drk run --dry-run shows gpus: all expanded to the visible GPUs, one pinned process each") {
  const Ran dry = run_seeing("2,3", {DRK_BINARY, "run", "--dry-run", kTwoGpus, "--set", "actors.evaluator.gpus=all"});
  DRK_CHECK_MESSAGE(dry.exit_code == 0, dry.output);
  DRK_CHECK_MESSAGE(contains(dry.output, "gpus: [2, 3]"), dry.output);
  DRK_CHECK_MESSAGE(contains(dry.output, "#   evaluator.0: node head, GPU 2 (CUDA_VISIBLE_DEVICES=2)"), dry.output);
  DRK_CHECK_MESSAGE(contains(dry.output, "#   evaluator.1: node head, GPU 3 (CUDA_VISIBLE_DEVICES=3)"), dry.output);

  const Ran none = run_seeing("", {DRK_BINARY, "run", "--dry-run", kTwoGpus, "--set", "actors.evaluator.gpus=all"});
  DRK_CHECK(none.exit_code == 1);
  DRK_CHECK_MESSAGE(contains(none.output, "`gpus: all` finds no GPU on this machine (CUDA_VISIBLE_DEVICES=): use "
                                          "`count: N` with `device: cpu`"),
                    none.output);
}

DRK_TEST_CASE("the two-GPU benchmark refuses a machine without two GPUs, and a malformed command line") {
  RunDir runs;
  const Ran one_gpu = run_seeing("0", {"/bin/bash", kBench, "--drk", DRK_BINARY, "--runs", runs.file("runs")});
  DRK_CHECK(one_gpu.exit_code == 1);
  DRK_CHECK_MESSAGE(contains(one_gpu.output, "this benchmark needs 2 GPUs (0 and 1)"), one_gpu.output);
  DRK_CHECK_MESSAGE(contains(one_gpu.output, "gpus names GPU 1, which this machine does not show"), one_gpu.output);

  const Ran only = run_seeing("0,1", {"/bin/bash", kBench, "--only", "3"});
  DRK_CHECK(only.exit_code == 2);
  DRK_CHECK_MESSAGE(contains(only.output, "--only must be 1 or 2, got '3'"), only.output);
  const Ran steps = run_seeing("0,1", {"/bin/bash", kBench, "--steps", "0"});
  DRK_CHECK(steps.exit_code == 2);
  DRK_CHECK_MESSAGE(contains(steps.output, "--steps must be a positive integer"), steps.output);
  const Ran unknown = run_seeing("0,1", {"/bin/bash", kBench, "--gpus", "2"});
  DRK_CHECK(unknown.exit_code == 2);
  DRK_CHECK_MESSAGE(contains(unknown.output, "unknown argument '--gpus'"), unknown.output);
  DRK_CHECK(run_seeing("0,1", {"/bin/bash", kBench, "--help"}).exit_code == 0);
}
