// drk: the one command of drkernel. Each command is a subcommand defined in tools/drk/*_command.cpp.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/supervision/warm_spare.h"
#include "tools/drk/commands.h"
#include "tools/drk/run_command.h"
#include "tools/drk/run_summary.h"

namespace {

constexpr const char* kDescription = "drk: train and run generators of fast kernels (drkernel)";

constexpr const char* kFooter =
    "`drk COMMAND --help` explains each command.\n"
    "\n"
    "Internal commands, not for people: `drk host` hosts one process of a running topology (started\n"
    "by `drk run` and `drk node`); `drk spare` is a process loaded ahead that waits for its `host`\n"
    "orders from the supervisor (supervision.warm_spare).";

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: a warm spare has loaded the program and now learns what to run.
  const std::vector<std::string> command_line = drk::runtime::command_line_or_orders(argc, argv);
  CLI::App drk{kDescription, "drk"};
  std::string log_level;
  drk.add_option("--log-level", log_level,
                 "what to log: trace, debug, info, warn, error or off (default $DRK_LOG_LEVEL, else info); "
                 "before the command, whose processes inherit it")
      ->type_name("LEVEL")
      ->check(drk::runtime::checked_by([](const std::string& value) -> drk::Status {
        if (drk::log::parse_level(value)) return {};
        return drk::make_error(drk::Errc::invalid_argument,
                               std::string("needs one of ") + drk::log::kLevelNames + ", got '" + value + "'");
      }));
  drk::tools::Actions actions;
  drk::tools::add_run_commands(drk, actions);
  drk::tools::add_eval_command(drk, actions);
  drk::tools::add_tasks_command(drk, actions);
  drk::tools::add_kernelbench_command(drk, actions);
  drk::tools::add_model_commands(drk, actions);
  drk::tools::add_archive_command(drk, actions);
  drk::tools::add_inspect_commands(drk, actions);
  drk::tools::add_keys_command(drk, actions);
  drk::tools::add_bench_command(drk, actions);
  drk::tools::add_generate_command(drk, actions);
  drk::tools::add_verify_corpus_command(drk, actions);
  drk::tools::add_serve_command(drk, actions);
  drk::tools::add_report_command(drk, actions);
  drk::tools::add_trace_command(drk, actions);
  drk::tools::add_slurm_commands(drk, actions);
  // The program's own, set last: a subcommand takes its parent's footer when it is added.
  drk.footer(kFooter);
  if (auto done = drk::runtime::parse_command_line(drk, command_line)) return *done;
  // Through the environment, so that the processes of a run (`drk host`, spares) inherit it.
  if (!log_level.empty()) ::setenv(drk::log::kLevelEnv, log_level.c_str(), 1);
  // Plain lines on stderr; `drk run`, `drk host` and `drk node` configure again with their run
  // directory (runtime/log.h).
  drk::log::configure({"drk"});
  const auto action = actions.find(&drk::runtime::chosen_command(drk));
  if (action == actions.end()) {
    std::cout << drk.help();
    return 2;
  }
  drk::tools::register_roles();
  drk::tools::register_bench_roles();
  drk::tools::set_run_summary(drk::tools::finish_run);
  return action->second();
}
