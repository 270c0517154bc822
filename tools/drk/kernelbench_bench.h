// `drk bench kernelbench`: KernelBench's own evaluation workflow (its eval_from_generations.py
// and benchmark_eval_analysis.py) run by drkernel (docs/kernelbench.md).
//
// With `candidates`, every candidate file of a run directory (kernelbench_candidates.h) is mapped
// to its imported problem (kernelbench/levelL/P_Name; problems not imported yet are imported from
// `import_from` when given, else the run stops before evaluating anything and says how to import
// them), evaluated and judged as `drk eval` would (judged_evaluation.h) on `jobs` threads, and
// recorded in KernelBench's eval_results.json (kernelbench_eval_results.h); then the per-level
// scores and fast_p table (kernelbench_score.h) are printed. A candidate that does not compile,
// load or run, or that cannot be evaluated at all, is its entry's failure; the run goes on.
// With `references`, every imported problem's own Model is the candidate (its source with
// `ModelNew = Model` appended): which references run here at their published shapes, the reasons
// of those that do not, and the median and spread of their speedups over themselves (near 1.0:
// the harness's sanity check).
//
// Progress: a line per candidate as it finishes, with what is left and an ETA. The results file
// is rewritten (atomically) after every candidate, so a long run that stops keeps what it did.
//
// Thread-safety: one call at a time per results file. Errors (exit status 1 with the message):
// a bad run directory (naming it and the layouts), problems not imported, an import folder that
// cannot be read, an engine that cannot be made, a results file that cannot be written.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "actors/evaluator/evaluation.h"
#include "judging/python_static_check.h"

namespace drk::tools {

struct KernelBenchBenchOptions {
  std::string candidates;       // RUN_DIR; empty with `references`
  bool references = false;
  std::string kernelbench_dir;  // the import folder; "": kernels::default_kernelbench_directory()
  std::string import_from;      // a KernelBench checkout (or levelN folder) to import missing problems from
  std::vector<int> levels;      // the levels evaluated; empty: all
  // eval_results.json; "": RUN_DIR/eval_results.json, and none with `references`. With several
  // levels, one file per level: the name with _level<L> before its extension.
  std::string out;
  // Keep the entries `out` already holds and evaluate only the samples it lacks: a sweep longer
  // than one sitting (all 250 references on one GPU: about an hour) goes on where it stopped.
  bool resume = false;
  size_t jobs = 1;
  // What the run's candidates were asked to write (--backend): their static checks' measure. The
  // references of --references are plain PyTorch.
  judging::Backend backend = judging::Backend::pytorch;
  evaluator::EngineOptions engine;
};

// Runs the benchmark, printing to `out`; returns the exit status.
int run_kernelbench_bench(const KernelBenchBenchOptions& options, std::ostream& out);

}  // namespace drk::tools
