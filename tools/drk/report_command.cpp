// drk report: one self-contained HTML page about one or more runs (tools/observe/run_report.h).
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "runtime/log.h"
#include "tools/drk/commands.h"
#include "tools/observe/run_history.h"
#include "tools/observe/run_report.h"

namespace drk::tools {
namespace {

struct ReportArgs {
  std::vector<std::string> run_dirs;
  std::string out;  // default RUN_DIR/report.html of the first run
};

int report_command(const ReportArgs& args) {
  std::vector<observe::RunHistory> runs;
  for (const auto& run_dir : args.run_dirs) {
    auto history = observe::read_run_history(run_dir);
    if (!history) {
      log::error() << "drk report: " << history.error().message;
      return 1;
    }
    for (const auto& missing : history->missing) log::warn() << "drk report: " << missing;
    runs.push_back(std::move(*history));
  }
  const std::string out = args.out.empty() ? args.run_dirs.front() + "/report.html" : args.out;
  if (auto written = write_file_atomically(real_file_system(), out, observe::render_run_report(runs)); !written) {
    log::error() << "drk report: cannot write the report: " << written.error().message
                 << " (pass --out PATH in a folder you can write)";
    return 1;
  }
  log::info() << "drk report: wrote " << out << " (open it in a browser; it needs no network)";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* command = drk.add_subcommand(
      "report",
      "one HTML page about a run: curves, best kernels, hacks caught, configuration\n"
      "\n"
      "Reads each RUN_DIR's archive (read-only: the run may still be going) and writes one\n"
      "self-contained HTML page (charts as inline SVG, no script, nothing fetched): mean reward, best\n"
      "speedup, coverage and Fast@1.0/1.2 per step, one line per run (give two runs, e.g. TRLOO and\n"
      "GRPO, to compare them); the best verified kernel of each task with its speedup, verdict and\n"
      "source; the hack attempts the Verifier caught, by check, with an example each; and each run's\n"
      "topology.yaml. What a run has not recorded yet is named at the top (docs/report.md).");
  command->add_option("RUN_DIR", args->run_dirs, "the run directories (one or more)")->required()->type_name("");
  command->add_option("--out", args->out, "where to write the page (default RUN_DIR/report.html of the first run)")
      ->type_name("PATH");
  actions[command] = [args] { return report_command(*args); };
}

}  // namespace drk::tools
