#include "tools/drk/run_command.h"

#include <iostream>

#include "runtime/node_main.h"
#include "runtime/process_main.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

RunSummary& run_summary() {
  static RunSummary summary;
  return summary;
}

}  // namespace

void set_run_summary(RunSummary summary) { run_summary() = std::move(summary); }

int cmd_run(const Args& args) {
  auto parsed = runtime::parse_run_args(args);
  if (!parsed) {
    std::cerr << "drk run: " << parsed.error().message << "\n\n" << runtime::run_usage();
    return 2;
  }
  if (parsed->help) {
    std::cout << runtime::run_usage();
    return 0;
  }
  runtime::RunOptions options;
  options.topology_path = parsed->topology_path;
  options.overrides = parsed->overrides;
  options.fresh = parsed->fresh;
  options.summary = run_summary();
  return runtime::run_head(options);
}

int cmd_host(const Args& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << runtime::host_usage();
    return 0;
  }
  auto parsed = runtime::parse_host_args(args);
  if (!parsed) {
    std::cerr << "drk host: " << parsed.error().message << "\n\n" << runtime::host_usage();
    return 2;
  }
  return runtime::run_host(*parsed);
}

int cmd_node(const Args& args) {
  auto parsed = runtime::parse_node_args(args);
  if (!parsed) {
    std::cerr << "drk node: " << parsed.error().message << "\n\n" << runtime::node_usage();
    return 2;
  }
  if (parsed->help) {
    std::cout << runtime::node_usage();
    return 0;
  }
  return runtime::run_node(*parsed);
}

}  // namespace drk::tools
