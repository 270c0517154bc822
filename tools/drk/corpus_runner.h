// The evaluations of `drk verify-corpus`: each corpus file is evaluated with the real
// EvaluationEngine and judged by the Verifier in an evaluating child process, under a deadline
// per file (a KernelBench-format Python file by an engine for Python candidates, for its problem
// as `drk kernelbench import` recorded it: one not imported is skipped, or an honest file judged by
// its source alone). A candidate (or a compiler) that hangs past it is killed with the child (its process
// group: compilers included; the sandbox dies with it) and recorded as a failure of its file, and
// a new child goes on with the next file. Rows travel from the child as one line of JSON each.
//
// Thread-safety: one thread; the functions fork. Ownership: CorpusEngines owns its engines (and
// so their sandboxes), made when a file first needs them. Errors: none returned; every failure
// (an engine that cannot be made, a child that cannot start, dies or overruns) becomes its
// file's row: "skipped" with a note, or a missed or falsely alarmed file.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "actors/evaluator/evaluation.h"
#include "kernels/catalog/task.h"
#include "runtime/progress_meter.h"
#include "tools/drk/corpus_expectation.h"

namespace drk::tools {

// An engine per device, thread count (drk-threads) and language (KernelBench-format Python
// candidates or the C ABI), made when a file first needs it.
struct CorpusEngines {
  kernels::TaskCatalog catalog;
  evaluator::EngineOptions options;
  kernels::DeviceKind cuda_shapes = kernels::DeviceKind::cpu;
  using Key = std::tuple<kernels::DeviceKind, int, bool>;
  std::map<Key, std::unique_ptr<evaluator::EvaluationEngine>> made;
  // Why a device's engine (for Python candidates or not) cannot be made.
  std::map<std::pair<kernels::DeviceKind, bool>, std::string> unusable;

  // The engine for `device` with `threads` (0: the options' max_threads), for Python candidates
  // when `python`; nullptr when it cannot be made (`unusable` says why).
  evaluator::EvaluationEngine* get(kernels::DeviceKind device, int threads, bool python = false);
};

// Called with each evaluated row as soon as its outcome is known, on the calling thread.
using RowDone = std::function<void(const Row&)>;

// Evaluates the files whose rows have no outcome yet (read_header gave the others theirs), each
// under `deadline`, in evaluating children, and fills their rows; counts each on `progress` and
// hands each to `row_done` when given (a run cut short still shows what it decided).
void evaluate_files(CorpusEngines& engines, const std::vector<std::filesystem::path>& files, std::vector<Row>& rows,
                    std::chrono::milliseconds deadline, runtime::ProgressMeter* progress = nullptr,
                    const RowDone& row_done = {});

// --each-alone: every file evaluated again with nothing evaluated before it (a fresh evaluating
// process, so fresh engines and sandboxes); the files whose verdict (honest or rejected, correct or
// not) or outcome differs from the whole run's: a candidate that changed the verdicts of those
// after it. Counts each file on `progress`.
std::vector<std::string> files_judged_otherwise_alone(CorpusEngines& engines,
                                                      const std::vector<std::filesystem::path>& files,
                                                      const std::vector<Row>& rows, std::chrono::milliseconds deadline,
                                                      runtime::ProgressMeter* progress = nullptr);

}  // namespace drk::tools
