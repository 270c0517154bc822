#include "tools/drk/run_command.h"

#include <memory>

#include "runtime/nodes/node_main.h"
#include "runtime/process_command_line.h"
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

void add_run_commands(CLI::App& drk, Actions& actions) {
  auto run = std::make_shared<runtime::RunOptions>();
  actions[runtime::add_run_command(drk, *run)] = [run] {
    run->summary = run_summary();
    return runtime::run_head(*run);
  };
  auto host = std::make_shared<runtime::HostArgs>();
  actions[runtime::add_host_command(drk, *host)] = [host] { return runtime::run_host(*host); };
  auto node = std::make_shared<runtime::NodeArgs>();
  actions[runtime::add_node_command(drk, *node)] = [node] { return runtime::run_node(*node); };
}

}  // namespace drk::tools
