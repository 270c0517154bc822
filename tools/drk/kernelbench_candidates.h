// The candidates of a KernelBench run directory (`drk bench kernelbench --candidates RUN_DIR`):
// which problem of which level each .py file is for, and which sample of it. Accepted layouts
// (kernelbench_run_layouts() says them in words, for messages and help):
//   RUN_DIR/level_<L>_problem_<P>_sample_<S>_kernel.py   KernelBench's own (its generations);
//   RUN_DIR/level<L>/<P>_<anything>.py                   a problem tree (19_ReLU.py as ModelNew);
//   RUN_DIR/<P>_<anything>.py                            one level's problems side by side: the
//                                                        level is RUN_DIR's name (level<L>) or the
//                                                        one --level given.
// In the last two, the files of one problem are its samples 0, 1, ... in the order of their names.
// Other files are ignored; .py files that fit no layout are listed as ignored.
//
// Thread-safety: pure functions of the file system. Errors: not_found for a RUN_DIR that does not
// exist or holds no candidate, invalid_argument for a flat layout whose level is unknown and for
// two files that are the same sample of a problem; each message names RUN_DIR and the layouts.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace drk::tools {

struct KernelBenchCandidate {
  int level = 0;
  int problem_id = 0;
  int sample_id = 0;
  std::string path;
};

struct KernelBenchRun {
  // Sorted by level, problem and sample.
  std::vector<KernelBenchCandidate> candidates;
  std::vector<std::string> ignored;  // .py files of RUN_DIR that fit no layout
};

// The candidates of `run_dir` whose level is among `levels` (all levels when empty).
Result<KernelBenchRun> find_kernelbench_candidates(const std::string& run_dir, const std::vector<int>& levels);

// The accepted layouts, one per line, indented by two spaces.
std::string kernelbench_run_layouts();

}  // namespace drk::tools
