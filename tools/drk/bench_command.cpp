// drk bench SUBCOMMAND: benchmarks of drkernel, each a subcommand of the table below.
//   runtime   the actor runtime against raw ZeroMQ, restart and node failure detection times
//             (tools/bench/runtime_report.h)
// A new benchmark is a function and a row of kSubcommands, with its lines in kBenchHelp.
#include <filesystem>
#include <iostream>

#include "tools/bench/restart_bench.h"
#include "tools/bench/runtime_report.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

constexpr const char* kBenchHelp = R"(usage: drk bench SUBCOMMAND [ARGS]

subcommands:
  runtime [--quick] [--json]
        drkernel's actors against raw ZeroMQ sockets, side by side, over inproc, ipc, tcp and
        tcp+CURVE with 64 B and 64 KiB payloads: messages per second, p50/p99 round trip and
        the drkernel/raw ratios; then the restart time after kill -9 and the time to detect a
        failed node (medians). Prints a table with the goals and a summary line; --json prints
        one JSON object whose TRANSPORT_PAYLOAD_throughput_ratio fields give each ratio.
        About 60 s; --quick about 12 s.

See docs/benchmarks.md.
)";

int bench_runtime(const Args& args) {
  bench::RuntimeBenchOptions options;
  options.program = "drk bench runtime";
  for (const std::string& arg : args) {
    if (arg == "--json") {
      options.json = true;
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kBenchHelp;
      return 0;
    } else {
      std::cerr << "drk bench runtime: unknown option '" << arg << "'\n\n" << kBenchHelp;
      return 2;
    }
  }
  // The restart measurement's child is `drk host`, which knows the bench_echo role
  // (register_bench_roles).
  std::error_code error;
  options.executable = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) {
    std::cerr << "drk bench runtime: cannot find the drk executable (/proc/self/exe): " << error.message() << "\n";
    return 1;
  }
  return bench::run_runtime_bench(options, std::cout, std::cerr);
}

struct Subcommand {
  const char* name;
  int (*run)(const Args&);
};

constexpr Subcommand kSubcommands[] = {
    {"runtime", bench_runtime},
};

}  // namespace

void register_bench_roles() { bench::register_echo_role(); }

int cmd_bench(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kBenchHelp;
    return args.empty() ? 2 : 0;
  }
  for (const Subcommand& subcommand : kSubcommands) {
    if (args[0] == subcommand.name) return subcommand.run(Args(args.begin() + 1, args.end()));
  }
  std::cerr << "drk bench: unknown subcommand '" << args[0] << "'\n\n" << kBenchHelp;
  return 2;
}

}  // namespace drk::tools
