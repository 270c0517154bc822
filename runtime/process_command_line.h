// The command lines of drkernel's processes (runtime/process_main.h, runtime/nodes/node_main.h), as
// CLI11 subcommands that a program adds to its parser (runtime/command_line.h): `drk` and the
// tests' drk_test_host share them.
//
//   run TOPOLOGY.yaml [--set KEY=VALUE ...] [--fresh]      into RunOptions
//   host --run-dir DIR --process NAME --incarnation N       into HostArgs (hidden from --help:
//                                                           the supervisor starts it, not people)
//   node --join tcp://HEAD:PORT --name NAME [...]           into NodeArgs
//
// Each returns the subcommand it added; the value it fills must outlive the parse.
#pragma once

#include <CLI/CLI.hpp>

#include "runtime/nodes/node_main.h"
#include "runtime/process_main.h"

namespace drk::runtime {

CLI::App* add_run_command(CLI::App& program, RunOptions& into);
CLI::App* add_host_command(CLI::App& program, HostArgs& into);
CLI::App* add_node_command(CLI::App& program, NodeArgs& into);

}  // namespace drk::runtime
