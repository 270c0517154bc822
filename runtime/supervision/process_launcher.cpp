#include "runtime/supervision/process_launcher.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "runtime/supervision/warm_spare.h"

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
  discard_spare();
  for (pid_t pid : children_) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void ForkExecLauncher::keep_warm_spare(std::vector<std::string> spare_argv) {
  if (spare_ && (spare_argv.empty() || spare_argv != spare_argv_)) discard_spare();
  spare_argv_ = std::move(spare_argv);
}

Result<pid_t> ForkExecLauncher::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return make_error(Errc::invalid_argument, "cannot start a process without a program");
  const bool spare_fits = !spare_argv_.empty() && spare_argv_.front() == argv.front();
  Result<pid_t> started = spare_fits && spare_ ? hand_to_spare(argv) : spawn(argv, -1);
  if (!started) return started;
  children_.insert(*started);
  if (spare_fits && !spare_) start_spare();
  return started;
}

Result<pid_t> ForkExecLauncher::hand_to_spare(const std::vector<std::string>& argv) {
  Spare spare = std::move(*spare_);
  spare_.reset();
  const bool handed = send_spare_orders(spare.orders.get(), argv).ok();
  spare.orders.reset();
  if (handed) return spare.pid;
  // The spare died before its orders (it is reaped here, never reported): start the usual way.
  ::kill(spare.pid, SIGKILL);
  int status = 0;
  while (::waitpid(spare.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return spawn(argv, -1);
}

void ForkExecLauncher::start_spare() {
  auto ends = open_socket_pair(SOCK_STREAM | SOCK_CLOEXEC, "a spare's orders");
  if (!ends) return;  // no spare: starts fork
  auto pid = spawn(spare_argv_, ends->theirs.get());
  if (!pid) return;
  spare_ = Spare{*pid, std::move(ends->ours)};
}

void ForkExecLauncher::discard_spare() {
  if (!spare_) return;
  spare_->orders.reset();  // a waiting spare reads the end of its orders and ends by itself
  ::kill(spare_->pid, SIGKILL);
  int status = 0;
  while (::waitpid(spare_->pid, &status, 0) < 0 && errno == EINTR) {
  }
  spare_.reset();
}

Result<pid_t> ForkExecLauncher::spawn(const std::vector<std::string>& argv, int stdin_fd) {
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
    if (stdin_fd >= 0 && ::dup2(stdin_fd, STDIN_FILENO) < 0) _exit(1);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(arguments[0], arguments.data());
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  return pid;
}

void ForkExecLauncher::signal(pid_t pid, int signal_number) {
  if (children_.count(pid)) ::kill(pid, signal_number);
}

std::vector<std::pair<pid_t, ExitStatus>> ForkExecLauncher::reap() {
  std::vector<std::pair<pid_t, ExitStatus>> ended;
  if (spare_) {
    int status = 0;
    if (::waitpid(spare_->pid, &status, WNOHANG) == spare_->pid) {
      // A spare that ended before its orders: the next start() forks and starts another.
      spare_.reset();
    }
  }
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
