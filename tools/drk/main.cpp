// drk: the one command of drkernel. Subcommands live in tools/drk/*_command.cpp.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/warm_spare.h"
#include "tools/drk/commands.h"
#include "tools/drk/run_command.h"
#include "tools/drk/run_summary.h"

namespace {

constexpr const char* kUsage = R"(drk: train and run generators of fast kernels (drkernel)

usage: drk COMMAND [ARGS]   (drk COMMAND --help for each)

commands:
  run TOPOLOGY.yaml [--set key=value ...] [--fresh]
        start a topology of actors and run the experiment it describes,
        e.g. drk run configs/quickstart.yaml --set experiment.steps=3
  eval --task NAME --candidate FILE [--device cpu|cuda] [--json]
        evaluate one candidate kernel against one task and print the full result
  tasks [show NAME]
        list the tasks, or show one
  archive summary|best|show RUN_DIR [ID]
        read the archive of a run
  inspect RUN_DIR [--json]
        show the actors of a live run: state, messages, handler times, restarts
  top RUN_DIR
        the same, refreshed every second
  keys generate DIR NAME [NAME ...] [--force] | show DIR
        the CURVE key pairs that secure the links between machines
  node --join tcp://HEAD:PORT --name NAME [--keys DIR]
        join this machine to a multi-node run and host the actors placed on it
  bench runtime [--quick] [--json]
        measure drkernel's messaging against raw ZeroMQ, restart and node failure times
  bench eval [--device cpu|cuda] [--quick] [--json]
        evaluations per hour, the latency of one evaluation, timing stability
  bench containment
        hostile candidates (a fork bomb, a memory bomb, spinners) beside an honest evaluation
  generate RUN_DIR --task NAME [--device cpu|cuda] [--iterations N] [--out FILE]
        test-time scaling: the run's trained policy refines kernels for one task over several
        iterations and writes the best verified one
  verify-corpus DIR [--each-alone] [--json]
        evaluate a folder of candidates that declare their expected verdict (tests/hacks):
        caught, missed, false alarms; --each-alone: each file again with nothing before it
  host ...
        host one process of a running topology (started by `drk run`, not by people)
  spare
        a process loaded ahead that waits for its `host` orders from the supervisor
        (supervision.warm_spare; not for people)
)";

struct Command {
  const char* name;
  int (*run)(const drk::tools::Args&);
};

constexpr Command kCommands[] = {
    {"run", drk::tools::cmd_run},     {"host", drk::tools::cmd_host},
    {"eval", drk::tools::cmd_eval},   {"tasks", drk::tools::cmd_tasks},
    {"archive", drk::tools::cmd_archive}, {"inspect", drk::tools::cmd_inspect},
    {"top", drk::tools::cmd_top},       {"keys", drk::tools::cmd_keys},
    {"node", drk::tools::cmd_node},     {"bench", drk::tools::cmd_bench},
    {"verify-corpus", drk::tools::cmd_verify_corpus}, {"generate", drk::tools::cmd_generate},
};

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: a warm spare has loaded the program and now learns what to run.
  const std::vector<std::string> command_line = drk::runtime::command_line_or_orders(argc, argv);
  const std::string command = command_line.size() > 1 ? command_line[1] : "";
  if (command.empty() || command == "--help" || command == "-h" || command == "help") {
    std::printf("%s", kUsage);
    return command.empty() ? 2 : 0;
  }
  drk::tools::register_roles();
  drk::tools::register_bench_roles();
  drk::tools::set_run_summary(drk::tools::finish_run);
  const drk::tools::Args args(command_line.begin() + 2, command_line.end());
  for (const auto& entry : kCommands) {
    if (command == entry.name) return entry.run(args);
  }
  std::fprintf(stderr, "drk: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}
