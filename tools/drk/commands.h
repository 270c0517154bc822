// The commands of `drk`, each a CLI11 subcommand (runtime/command_line.h) that an add_*
// function defines on the program's parser, with the action that runs it. main() parses the
// whole command line, then runs the action of the command it chose (`drk bench eval`: bench's
// eval); a command without an action (`drk bench` alone) prints its help and exits 2.
// An action returns the exit code: 0 success, 1 a failure its message explains.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace CLI {
class App;
}

namespace drk::tools {

// What each command runs once the command line is parsed, by the command's subcommand.
using Actions = std::map<const CLI::App*, std::function<int()>>;

void add_run_commands(CLI::App& drk, Actions& actions);  // run, node, host (tools/drk/run_command.cpp)
void add_eval_command(CLI::App& drk, Actions& actions);
void add_tasks_command(CLI::App& drk, Actions& actions);
void add_archive_command(CLI::App& drk, Actions& actions);
void add_inspect_commands(CLI::App& drk, Actions& actions);  // inspect, top
void add_keys_command(CLI::App& drk, Actions& actions);
void add_bench_command(CLI::App& drk, Actions& actions);
void add_verify_corpus_command(CLI::App& drk, Actions& actions);
void add_generate_command(CLI::App& drk, Actions& actions);
void add_kernelbench_command(CLI::App& drk, Actions& actions);
void add_model_commands(CLI::App& drk, Actions& actions);  // model split, model compose (tools/drk/model_command.cpp)
void add_serve_command(CLI::App& drk, Actions& actions);  // tools/drk/serve_command.cpp
void add_report_command(CLI::App& drk, Actions& actions);  // tools/drk/report_command.cpp
void add_trace_command(CLI::App& drk, Actions& actions);  // tools/drk/trace_command.cpp
void add_slurm_commands(CLI::App& drk, Actions& actions);  // slurm, slurm-task (tools/drk/slurm_command.cpp)

// Where `drk eval` and `drk verify-corpus` cache compiled candidates: $DRK_CACHE_DIR, else
// $XDG_CACHE_HOME/drk/compile-cache, else ~/.cache/drk/compile-cache (tools/drk/eval_command.cpp).
std::string default_compile_cache_dir();

// `value` with `digits` decimals ("3.14"), for the commands' printed results.
std::string fixed(double value, int digits);

// Registers the six actor roles, and the experiment keys they read, with the runtime
// (tools/drk/roles.cpp).
void register_roles();
// Registers the role the benchmarks' child processes host (tools/drk/bench_command.cpp), so that
// `drk host` can be the child of `drk bench runtime`'s restart measurement.
void register_bench_roles();

}  // namespace drk::tools
