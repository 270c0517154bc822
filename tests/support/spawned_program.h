// SpawnedProgram: a real program started by a test, in a process group of its own, with its
// stdout and stderr going to one file. Waits are bounded; whatever is still running when the
// object is destroyed (the program and every child in its group) is killed and reaped, so a
// failing test never leaves processes behind.
//
// `descriptors` are given to the program as its descriptors 3, 4, ... in their order (a pipe to
// Chromium's --remote-debugging-pipe, for one); the caller keeps its own and closes them.
//
// Thread-safety: one thread. Errors: a program that cannot start exits with code 127.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

namespace drk::testing {

class SpawnedProgram {
 public:
  SpawnedProgram(std::vector<std::string> argv, const std::string& output_path,
                 const std::vector<int>& descriptors = {}) {
    std::vector<char*> pointers;
    for (auto& arg : argv) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    constexpr size_t kMaxDescriptors = 8;  // the child allocates nothing: a fixed array
    if (descriptors.size() > kMaxDescriptors) throw std::invalid_argument("more than 8 descriptors");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int out = ::open(output_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
      // Each moved above every target first, so that placing one never overwrites another.
      const int first_target = 3;
      const int above = first_target + static_cast<int>(descriptors.size());
      int moved[kMaxDescriptors];
      for (size_t i = 0; i < descriptors.size(); ++i) moved[i] = ::fcntl(descriptors[i], F_DUPFD_CLOEXEC, above);
      for (size_t i = 0; i < descriptors.size(); ++i) ::dup2(moved[i], first_target + static_cast<int>(i));
      ::execv(pointers[0], pointers.data());
      _exit(127);
    }
    ::setpgid(pid_, pid_);  // also here, so that the group exists whoever runs first
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ < 0) throw std::runtime_error("pidfd_open failed");
  }

  ~SpawnedProgram() {
    if (!ended_) {
      ::kill(-pid_, SIGKILL);
      reap();
    }
    ::close(pidfd_);
  }
  SpawnedProgram(const SpawnedProgram&) = delete;
  SpawnedProgram& operator=(const SpawnedProgram&) = delete;

  // True when the program ended within `timeout_ms` (its exit code is then known).
  bool wait_for(int timeout_ms) {
    if (ended_) return true;
    pollfd ended{pidfd_, POLLIN, 0};
    if (::poll(&ended, 1, timeout_ms) != 1) return false;
    reap();
    return true;
  }

  bool running() { return !wait_for(0); }
  // The exit code, or 128 + the signal that ended it.
  int exit_code() const { return exit_code_; }
  pid_t pid() const { return pid_; }

 private:
  void reap() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    ended_ = true;
  }

  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool ended_ = false;
  int exit_code_ = -1;
};

}  // namespace drk::testing
