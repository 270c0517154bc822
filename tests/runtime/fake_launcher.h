// FakeLauncher: a ProcessLauncher whose children exist only as pids, for supervisor tests.
// They die when the test says so (die()) or when signalled: SIGTERM ends one with exit code 0
// (unless ignore_sigterm), any other signal kills it by that signal. Reaping returns the ends
// since the last call, as SIGCHLD would announce them.
// Thread-safety: one thread.
#pragma once

#include <algorithm>
#include <csignal>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/supervision/process_launcher.h"
#include "tests/doctest_drk.h"

namespace drk::testing {

using runtime::ExitStatus;

// Children that exist only as pids.
class FakeLauncher final : public runtime::ProcessLauncher {
 public:
  bool refuse_to_start = false;
  bool ignore_sigterm = false;
  std::vector<std::string> started;  // process names, in start order
  std::vector<std::pair<std::string, int>> signalled;

  Result<pid_t> start(const std::vector<std::string>& argv) override {
    if (refuse_to_start) return make_error(Errc::io_error, "no more processes");
    const std::string& process = argv.at(5);
    DRK_REQUIRE(argv.at(1) == "host");
    started.push_back(process);
    const pid_t pid = next_pid_++;
    running_[pid] = process;
    return pid;
  }

  void signal(pid_t pid, int signal_number) override {
    if (!running_.count(pid)) return;
    signalled.emplace_back(running_[pid], signal_number);
    if (signal_number == SIGTERM && ignore_sigterm) return;
    end(pid, signal_number == SIGTERM ? ExitStatus{0, 0} : ExitStatus{0, signal_number});
  }

  std::vector<std::pair<pid_t, ExitStatus>> reap() override { return std::exchange(ended_, {}); }

  void die(const std::string& process, ExitStatus status) {
    for (const auto& [pid, name] : running_) {
      if (name == process) {
        end(pid, status);
        return;
      }
    }
    DRK_FAIL("no running process " << process);
  }

  int starts_of(const std::string& process) const {
    return static_cast<int>(std::count(started.begin(), started.end(), process));
  }

 private:
  void end(pid_t pid, ExitStatus status) {
    ended_.emplace_back(pid, status);
    running_.erase(pid);
  }

  pid_t next_pid_ = 1000;
  std::map<pid_t, std::string> running_;
  std::vector<std::pair<pid_t, ExitStatus>> ended_;
};

}  // namespace drk::testing
