// The subcommands of the `drk` command. Each takes the arguments after its own name and
// returns the process exit code (0 success, 1 failure the message explains, 2 usage error).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace drk::tools {

using Args = std::vector<std::string>;

int cmd_run(const Args& args);      // drk run TOPOLOGY.yaml [--set key=value ...]
int cmd_host(const Args& args);     // drk host ... (started by `drk run`, not by people)
int cmd_node(const Args& args);     // drk node --join tcp://HEAD:PORT --name NAME [--keys DIR]
int cmd_eval(const Args& args);     // drk eval --task NAME --candidate FILE [--device] [--json]
int cmd_tasks(const Args& args);    // drk tasks [show NAME]
int cmd_archive(const Args& args);  // drk archive summary|best RUN_DIR
int cmd_inspect(const Args& args);  // drk inspect ADDRESS [--json] [--hung-after S]
int cmd_top(const Args& args);      // drk top ADDRESS [--hung-after S]
int cmd_keys(const Args& args);     // drk keys generate DIR NAME... [--force] | show DIR
int cmd_bench(const Args& args);    // drk bench runtime [--quick] [--json]
int cmd_verify_corpus(const Args& args);
int cmd_generate(const Args& args);  // drk generate RUN_DIR --task NAME [...] (tools/drk/generate_command.cpp)  // drk verify-corpus DIR [--json] (tools/drk/verify_corpus_command.cpp)

// Where `drk eval` and `drk verify-corpus` cache compiled candidates: $DRK_CACHE_DIR, else
// $XDG_CACHE_HOME/drk/compile-cache, else ~/.cache/drk/compile-cache (tools/drk/eval_command.cpp).
std::string default_compile_cache_dir();

// `value` with `digits` decimals ("3.14"), for the commands' printed results.
std::string fixed(double value, int digits);

// The number after args[i] (then i moves onto it), or none after saying on stderr, as
// "COMMAND: FLAG needs a number >= LOW, got 'TEXT'" (tools/drk/eval_command.cpp).
std::optional<double> number_argument(const Args& args, size_t& i, const std::string& command, double low);

// Registers the six actor roles, and the experiment keys they read, with the runtime
// (tools/drk/roles.cpp).
void register_roles();
// Registers the role the benchmarks' child processes host (tools/drk/bench_command.cpp), so that
// `drk host` can be the child of `drk bench runtime`'s restart measurement.
void register_bench_roles();

}  // namespace drk::tools
