// drk-bench-runtime: drkernel's actor runtime against raw ZeroMQ, side by side in one run
// (runtime_report.h); the same as `drk bench runtime`, without the rest of drk.
//
//   drk-bench-runtime [--quick] [--json]
//
// Exit code 0 when everything was measured (goals missed or not), 1 when a measurement failed,
// 2 for a usage error. `drk-bench-runtime host ...` is the child process of the restart
// measurement (restart_bench.h).
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/process_main.h"
#include "tools/bench/restart_bench.h"
#include "tools/bench/runtime_report.h"

namespace {

constexpr const char* kUsage =
    "usage: drk-bench-runtime [--quick] [--json]\n"
    "\n"
    "Measures drkernel's actor runtime against raw ZeroMQ (inproc, ipc, tcp, tcp+CURVE; 64 B and\n"
    "64 KiB): messages per second, p50/p99 round trip and the ratios; the restart time after\n"
    "kill -9; the node failure detection time. About 60 s; --quick about 12 s. --json prints one\n"
    "JSON object instead of the table.\n";

int host_main(const std::vector<std::string>& args) {
  drk::bench::register_echo_role();
  auto parsed = drk::runtime::parse_host_args(args);
  if (!parsed) {
    std::cerr << parsed.error().message << "\n" << drk::runtime::host_usage();
    return 2;
  }
  return drk::runtime::run_host(*parsed);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "host") return host_main({args.begin() + 1, args.end()});

  drk::bench::RuntimeBenchOptions options;
  options.program = "drk-bench-runtime";
  options.executable = std::filesystem::read_symlink("/proc/self/exe").string();
  for (const std::string& arg : args) {
    if (arg == "--json") {
      options.json = true;
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "drk-bench-runtime: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  return drk::bench::run_runtime_bench(options, std::cout, std::cerr);
}
