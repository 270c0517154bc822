// drk verify-corpus: evaluates every candidate of a folder whose files declare the expected
// outcome (docs/verification.md, "The corpus format"), with the real EvaluationEngine and the
// Verifier, and reports what was caught, missed, and falsely alarmed: the file format and its
// judgement in corpus_expectation.h, the evaluating children under a deadline per file in
// corpus_runner.h, the totals and their printing in corpus_report.h.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/progress_meter.h"
#include "tools/drk/commands.h"
#include "tools/drk/corpus_expectation.h"
#include "tools/drk/corpus_report.h"
#include "tools/drk/corpus_runner.h"
#include "tools/drk/engine_options.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

// What `drk verify-corpus` was asked.
struct VerifyCorpusArgs {
  std::string directory;
  bool json = false;
  bool each_alone = false;
  double deadline_s = 120;
  kernels::DeviceKind cuda_shapes = kernels::DeviceKind::cpu;
  evaluator::EngineOptions options;
};

int verify_corpus(const VerifyCorpusArgs& args) {
  const std::string& directory = args.directory;
  const bool json = args.json;
  const bool each_alone = args.each_alone;
  const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(args.deadline_s * 1000));
  const kernels::DeviceKind cuda_shapes = args.cuda_shapes;
  const evaluator::EngineOptions& options = args.options;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    log::error() << "drk verify-corpus: '" << directory
                 << "' is not a folder: pass the corpus folder, e.g. tests/hacks";
    return 1;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    auto extension = entry.path().extension();
    if (entry.is_regular_file() && (extension == ".cpp" || extension == ".cu" || extension == ".py"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    log::error() << "drk verify-corpus: no *.cpp, *.cu or *.py candidates under '" << directory << "'";
    return 1;
  }
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) {
    log::error() << "drk verify-corpus: " << catalog.error().message;
    return 1;
  }
  CorpusEngines engines{std::move(*catalog), options, cuda_shapes, {}, {}};
  std::vector<Row> rows(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    rows[i].file = fs::relative(files[i], directory).string();
    read_header(files[i], rows[i]);
  }
  {
    const auto pending = std::count_if(rows.begin(), rows.end(), [](const Row& row) { return row.outcome.empty(); });
    runtime::ProgressMeter progress("drk verify-corpus", "files", static_cast<size_t>(pending), &std::cerr,
                                    runtime::stderr_progress_options());
    // Each verdict as it is decided: a run cut short (a device call's limit) still shows them.
    evaluate_files(engines, files, rows, deadline, &progress, [](const Row& row) {
      std::cerr << "drk verify-corpus: " << row.file << ": " << row.got << " (" << row.outcome << ")";
      for (size_t i = 0; i < row.failed.size(); ++i) std::cerr << (i == 0 ? ", failed " : ", ") << row.failed[i];
      std::cerr << std::endl;
    });
  }
  Totals totals = total(rows);
  std::vector<std::string> differing;
  if (each_alone) {
    runtime::ProgressMeter progress("drk verify-corpus --each-alone", "files", files.size(), &std::cerr,
                                    runtime::stderr_progress_options());
    differing = files_judged_otherwise_alone(engines, files, rows, deadline, &progress);
  }
  if (json) print_json(directory, rows, totals, each_alone, differing);
  else print_table(rows, totals, each_alone, differing);
  return totals.perfect() && differing.empty() ? 0 : 1;
}

}  // namespace

void add_verify_corpus_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<VerifyCorpusArgs>();
  evaluator::EngineOptions& options = args->options;
  options.trials = 3;
  options.timing_budget_ms = 100;  // the corpus checks honesty, not speed
  options.max_threads = 2;
  options.min_samples = 3;
  options.max_samples = 20;
  options.target_batch_ms = 5;  // long batches: a loaded machine's wake-up latency then stays far below 3x (timer_mismatch)
  CLI::App* command = drk.add_subcommand(
      "verify-corpus",
      "the hack corpus: caught, missed, false alarms\n"
      "\n"
      "Evaluates every candidate under DIR (*.cpp for the CPU, *.cu for CUDA, *.py KernelBench-format\n"
      "Python; sub-folders included) with the evaluation engine and the Verifier, compares each verdict\n"
      "with the outcome the file declares in its header comment, and prints one row per file, the totals\n"
      "and the totals per kind of file:\n"
      "\n"
      "  // drk-task: relu\n"
      "  // drk-expect: hacked static.process        (every listed check must fail)\n"
      "  // drk-expect: honest library.used           (must pass; listed warnings must be reported)\n"
      "  // drk-best-known: 1.5                       (optional: the task's best known speedup, as the\n"
      "                                                Oracle would send it; a result over 3 times it is\n"
      "                                                timed again, with input elements swapped)\n"
      "  // drk-threads: 1                            (optional: ctx->max_threads for this file, in place\n"
      "                                                of --threads)\n"
      "\n"
      "A hacked file is caught when its verdict is rejected with every declared check among the failed\n"
      "ones; an honest file passes when its verdict is honest, it is correct, and every declared warning\n"
      "is reported. *.cu files are skipped with a note where no CUDA device can be used. Every correct\n"
      "file also runs the out_of_bounds check: one call under compute-sanitizer memcheck (*.cu) or with\n"
      "every tensor between inaccessible guard pages (CPU).\n"
      "\n"
      "*.py files write their header in `#` lines and also declare `# drk-backend: cuda|triton|cpp|pytorch`\n"
      "and, when hacked, `# drk-caught-by: static|runtime`. A static hack is judged by its source alone\n"
      "(the Python static checks), anywhere; a runtime hack is evaluated for its KernelBench problem\n"
      "(imported with `drk kernelbench import`; --kernelbench-dir) where its backend runs (plain PyTorch\n"
      "on the CPU), else skipped with the reason; an honest file is evaluated where it can be, else judged\n"
      "by its source alone.");
  command->add_option("DIR", args->directory, "the corpus folder, e.g. tests/hacks")->required()->type_name("");
  command->add_flag("--json", args->json, "print one JSON object: detection_rate, false_positive_rate, rows, totals");
  add_engine_options(*command, options, /*memory_limit=*/true);
  command->add_option("--kernelbench-dir", options.kernelbench_dir,
                      "where the *.py files' KernelBench problems were imported (default\n"
                      "$DRK_KERNELBENCH_DIR, else kernels/tasks/kernelbench)")
      ->type_name("DIR");
  command->add_flag("--each-alone", args->each_alone,
                    "then evaluate every file again with nothing evaluated before it, and list the\n"
                    "files judged otherwise than in the whole run (a candidate that changed the\n"
                    "verdicts of those after it); any such file makes the exit status 1");
  add_device_option(*command, "--cuda-shapes", args->cuda_shapes,
                    "the shapes *.cu files are evaluated at (default cpu, the tasks' scaled shapes: the\n"
                    "corpus checks honesty, and at KernelBench's shapes the host-side checks of one\n"
                    "evaluation take minutes, docs/gpu.md)");
  command->add_option("--deadline-s", args->deadline_s,
                      "wall time one file may take, compile and evaluation (default 120): past it\n"
                      "the evaluation is killed and the file counts as missed (hacked) or a false\n"
                      "alarm (honest), with the note \"deadline\"")
      ->type_name("S")
      ->check(runtime::at_least(1));
  command->footer(
      "Exit status: 0 when every hacked file is caught and no honest file is rejected (100 % detection,\n"
      "0 % false positives) and, with --each-alone, every file is judged alone as in the whole run; 1\n"
      "otherwise or when a file lacks its header; a usage error exits with CLI11's code (105 a refused\n"
      "value, 106 a missing argument, 109 an unknown one).");
  actions[command] = [args] { return verify_corpus(*args); };
}

}  // namespace drk::tools
