// drk kernelbench import PATH: a user's KernelBench problems become records of the task catalog
// (tools/drk/kernelbench_import.h, docs/kernelbench.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "base/file_system.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/progress_meter.h"
#include "tools/drk/commands.h"
#include "tools/drk/kernelbench_import.h"

namespace drk::tools {
namespace {

struct ImportArgs {
  std::string path;
  std::string into = kernels::default_kernelbench_directory();
  std::optional<std::string> python;
  std::optional<std::string> run;
  int seconds_per_problem = 300;
  uint64_t seed = 42;
  std::optional<size_t> jobs;
};

int import_problems(const ImportArgs& args) {
  auto files = find_kernelbench_files(args.path);
  if (!files) {
    log::error() << "drk kernelbench import: " << files.error().message;
    return 1;
  }
  auto runner = compile::system_command_runner();
  auto python = find_python_with_torch(args.python, *runner);
  if (!python) {
    log::error() << "drk kernelbench import: " << python.error().message;
    return 1;
  }
  KernelBenchImport import;
  import.into = args.into;
  import.python = *python;
  import.run_device = args.run;
  import.per_problem = std::chrono::seconds(args.seconds_per_problem);
  import.seed = args.seed;
  import.jobs = args.jobs.value_or(args.run == "cpu" ? 1 : default_import_jobs());
  size_t done = 0, usable = 0;
  const size_t total = files->size();
  runtime::ProgressMeter progress("drk kernelbench import", "problems", total, &std::cerr,
                                  runtime::stderr_progress_options());
  auto imported = import_kernelbench(*files, import, *runner, real_file_system(), [&](const auto& problem) {
    ++done;
    usable += problem.usable() ? 1 : 0;
    std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + problem.name + "  ";
    if (!problem.failure)
      line += kernels::kernelbench_values_text(problem.inputs) + " -> " +
              kernels::kernelbench_values_text(problem.outputs) + "  ";
    progress.note(std::cout, line + kernels::kernelbench_status_text(problem) + "\n");
    progress.add_done();
  });
  progress.finish();
  if (!imported) {
    log::error() << "drk kernelbench import: " << imported.error().message << " (" << done << " of " << total
                 << " problems were recorded before it)";
    return 1;
  }
  std::cout << "imported " << total << " problems into " << args.into << ": " << usable << " usable, "
            << total - usable << " with the reason they cannot run (drk tasks lists them)\n";
  return 0;
}

}  // namespace

void add_kernelbench_command(CLI::App& drk, Actions& actions) {
  CLI::App* kernelbench = drk.add_subcommand("kernelbench", "KernelBench's own problems in the task catalog");
  auto args = std::make_shared<ImportArgs>();
  CLI::App* import = kernelbench->add_subcommand(
      "import",
      "record KernelBench problem files as tasks\n"
      "\n"
      "Reads a KernelBench checkout (its levelN/ID_Name.py files), a levelN folder or one problem file,\n"
      "and records each problem (kernelbench/levelN/ID_Name): its inputs and outputs at the published\n"
      "shapes, FLOPs where torch's flop counter counts them, the bytes a kernel moves at least, the\n"
      "SHA-256 of its source, and a family of ours where one fits. A problem that cannot be described\n"
      "or whose reference cannot run is recorded with the reason. The files are described by a Python\n"
      "with torch (--python, $DRK_PYTHON, else python3 or /usr/bin/python3, whichever imports torch).\n"
      "With --run DEVICE each reference also runs once at the published shapes (time, peak memory).");
  import->add_option("PATH", args->path, "a KernelBench checkout, a levelN folder or a problem file")
      ->required()
      ->type_name("");
  import->add_option("--into", args->into, "the import folder (default: $DRK_KERNELBENCH_DIR, else kernelbench/ of the task folder)")
      ->type_name("DIR");
  import->add_option("--python", args->python, "the Python interpreter with torch")->type_name("EXE");
  import->add_option("--run", args->run, "also run each reference once at the published shapes")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->type_name("cpu|cuda");
  import->add_option("--seconds-per-problem", args->seconds_per_problem, "the time one problem may take (default 300)")
      ->check(CLI::PositiveNumber)
      ->type_name("S");
  import->add_option("--jobs", args->jobs,
                     "probe processes at once, each a Python with torch (default a quarter of the cores, 1 to 4;\n"
                     "1 with --run cpu, whose reference times want the host to themselves; with --run cuda\n"
                     "the references take the device one at a time while the others build their models)")
      ->check(runtime::at_least(1))
      ->type_name("N");
  import->add_option("--seed", args->seed, "the seed of get_init_inputs() and get_inputs() (default 42)")->type_name("N");
  actions[import] = [args] { return import_problems(*args); };
}

}  // namespace drk::tools
