// Warm spares: a child process started before it is needed, so that a restart does not wait
// for a program to load. Starting `drk host` costs more than the actors it hosts: the dynamic
// loader maps and relocates LibTorch (with CUDA, about 0.6 s on the GPU host) before main runs.
// A spare is started as `EXECUTABLE spare`, runs its program's start-up, then waits on its
// standard input for orders: the command line it is to become. The launcher
// (process_launcher.h) hands a spare its orders instead of starting a new process, and starts
// the next spare at once.
//
// The orders travel as NUL-terminated arguments, argv[0] first, then an empty argument; the
// launcher closes its end after writing. A spare whose launcher closes without orders has
// nothing to do and ends.
//
// Thread-safety: plain functions over file descriptors the caller owns.
// Errors: io_error when the descriptor fails; parse_error for orders that do not end properly
// (the launcher died mid-write).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::runtime {

// The command (argv[1]) that makes a program a spare.
inline constexpr std::string_view kSpareCommand = "spare";

// Room that a spare's command line keeps (a blank third argument) so that, once it has its
// orders, `ps` and /proc/PID/cmdline show them instead of `spare`: the orders are written over
// the spare's own argument strings (cut to this room).
inline constexpr std::size_t kSpareCommandLineRoom = 4096;

// The command line of a spare of `executable`, or none when `wanted` is false (what
// ForkExecLauncher::keep_warm_spare takes).
inline std::vector<std::string> spare_argv(const std::string& executable, bool wanted) {
  if (!wanted) return {};
  return {executable, std::string(kSpareCommand), std::string(kSpareCommandLineRoom, ' ')};
}

// For a program's main: its command line, argv[0] first; for `PROGRAM spare ROOM`, the orders
// that the spare waits for (then shown as its command line). A spare whose orders never come ends the process here (exit 0; exit 1
// with the reason on stderr when they were cut short).
std::vector<std::string> command_line_or_orders(int argc, char** argv);

// The spare's side: blocks until orders arrive on `fd`; nullopt when `fd` closes without any.
// On return the spare's standard input is /dev/null (the orders' socket is closed).
Result<std::optional<std::vector<std::string>>> await_spare_orders(int fd);

// The launcher's side: writes `argv` to the spare. Never raises SIGPIPE (a dead spare is an
// io_error).
Status send_spare_orders(int fd, const std::vector<std::string>& argv);

}  // namespace drk::runtime
