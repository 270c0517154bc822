#include "runtime/process_launcher.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace drk::runtime {

std::string ExitStatus::describe() const {
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return std::string("killed by ") +
           (name ? std::string("SIG") + name : "signal " + std::to_string(signal));
  }
  return "exited with code " + std::to_string(exit_code);
}

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus exit;
  if (WIFSIGNALED(status))
    exit.signal = WTERMSIG(status);
  else if (WIFEXITED(status))
    exit.exit_code = WEXITSTATUS(status);
  return exit;
}

ForkExecLauncher::~ForkExecLauncher() {
  for (pid_t pid : children_) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

Result<pid_t> ForkExecLauncher::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return make_error(Errc::invalid_argument, "cannot start a process without a program");
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
  std::vector<char*> arguments;
  for (const auto& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);
  const std::string exec_failed = "drk: cannot execute " + argv[0] + "\n";
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    return make_error(Errc::io_error, "cannot start '" + argv[0] + "': fork failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) _exit(1);  // the head died before the death signal was armed
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(arguments[0], arguments.data());
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  children_.insert(pid);
  return pid;
}

void ForkExecLauncher::signal(pid_t pid, int signal_number) {
  if (children_.count(pid)) ::kill(pid, signal_number);
}

std::vector<std::pair<pid_t, ExitStatus>> ForkExecLauncher::reap() {
  std::vector<std::pair<pid_t, ExitStatus>> ended;
  for (auto child = children_.begin(); child != children_.end();) {
    int status = 0;
    const pid_t result = ::waitpid(*child, &status, WNOHANG);
    if (result == *child) {
      ended.emplace_back(*child, ExitStatus::from_wait_status(status));
      child = children_.erase(child);
    } else {
      ++child;
    }
  }
  return ended;
}

}  // namespace drk::runtime
