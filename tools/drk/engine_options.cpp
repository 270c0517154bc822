#include "tools/drk/engine_options.h"

#include <sstream>

#include "runtime/command_line.h"
#include "tools/drk/commands.h"

namespace drk::tools {

void add_engine_options(CLI::App& command, evaluator::EngineOptions& options, bool memory_limit) {
  options.cache_dir = default_compile_cache_dir();
  std::ostringstream budget;
  budget << options.timing_budget_ms;
  command
      .add_option("--trials", options.trials,
                  "correctness trials, each on fresh inputs (default " + std::to_string(options.trials) + ")")
      ->type_name("N")
      ->check(runtime::at_least(1));
  command.add_option("--budget-ms", options.timing_budget_ms, "wall time the timing may use (default " + budget.str() + ")")
      ->type_name("MS")
      ->check(runtime::at_least(0));
  command
      .add_option("--threads", options.max_threads,
                  "threads the candidate and the reference may use (default " + std::to_string(options.max_threads) + ")")
      ->type_name("N")
      ->check(runtime::at_least(1));
  if (memory_limit) {
    runtime::add_megabytes_option(command, "--memory-mb", options.sandbox.memory_bytes, 64,
                                  "host memory the candidate may take beyond the sandbox's own (default: half\n"
                                  "the machine's memory over the sandboxes that run at once)");
  }
  runtime::add_parsed_option(command, "--launch-latency", options.hide_launch_latency, evaluator::parse_launch_latency,
                             "cuda: whether the events time the host's launches too (included, the\n"
                             "default for C ABI candidates) or only the device's work (hidden, the default\n"
                             "for Python ones: each call queued behind a hold kernel of the harness and\n"
                             "released once it returned; docs/gpu.md)")
      ->type_name("included|hidden");
  command.add_option("--cache-dir", options.cache_dir,
                     "compile cache (default $DRK_CACHE_DIR, else ~/.cache/drk/compile-cache)")
      ->type_name("DIR");
}

}  // namespace drk::tools
