#include "actors/evaluator/sandbox_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "actors/evaluator/sandbox_channel.h"

#ifndef DRK_SANDBOX_PATH
#error "DRK_SANDBOX_PATH must be defined by the build (actors/evaluator/CMakeLists.txt)"
#endif

namespace drk::evaluator {
namespace {

constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kRegionFd = 5;

void set_limit(int resource, rlim_t value) {
  rlimit limit{value, value};
  setrlimit(resource, &limit);
}

// Runs in the forked child: async-signal-safe calls only, then exec.
[[noreturn]] void exec_child(const SandboxOptions& options, const char* const* argv, const char* work_dir,
                             pid_t parent, int request_read, int reply_write, int region_fd, int output_write) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(126);
  setpgid(0, 0);
  // Move the three descriptors above the targets first, so that none is overwritten.
  int moved_request = fcntl(request_read, F_DUPFD, 64);
  int moved_reply = fcntl(reply_write, F_DUPFD, 64);
  int moved_region = fcntl(region_fd, F_DUPFD, 64);
  if (moved_request < 0 || moved_reply < 0 || moved_region < 0) _exit(125);
  int moved_output = output_write >= 0 ? fcntl(output_write, F_DUPFD, 64) : -1;
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd < 0) _exit(125);
  dup2(null_fd, 0);
  dup2(moved_output >= 0 ? moved_output : null_fd, 1);
  dup2(moved_output >= 0 ? moved_output : null_fd, 2);
  if (dup2(moved_request, kRequestFd) < 0 || dup2(moved_reply, kReplyFd) < 0 || dup2(moved_region, kRegionFd) < 0)
    _exit(125);
  if (syscall(SYS_close_range, kRegionFd + 1, ~0U, 0) != 0)
    for (int fd = kRegionFd + 1; fd < 4096; ++fd) close(fd);
  if (chdir(work_dir) != 0) _exit(124);
  if (unshare(CLONE_NEWNET) != 0) unshare(CLONE_NEWUSER | CLONE_NEWNET);
  set_limit(RLIMIT_CORE, 0);
  const bool launched = !options.launcher.empty();
  set_limit(RLIMIT_FSIZE, launched ? rlim_t{1} << 30 : 0);
  set_limit(RLIMIT_NOFILE, launched ? std::max<rlim_t>(options.max_open_files, 4096) : options.max_open_files);
  set_limit(RLIMIT_CPU, options.cpu_seconds);
  if (options.address_space_bytes > 0) set_limit(RLIMIT_AS, options.address_space_bytes);
  execv(argv[0], const_cast<char* const*>(argv));
  _exit(127);
}

}  // namespace

std::string default_sandbox_executable() {
  if (const char* path = std::getenv("DRK_SANDBOX"); path && *path) return path;
  return DRK_SANDBOX_PATH;
}

std::string default_cuda_sandbox_executable() {
  if (const char* path = std::getenv("DRK_SANDBOX_CUDA"); path && *path) return path;
#ifdef DRK_SANDBOX_CUDA_PATH
  return DRK_SANDBOX_CUDA_PATH;
#else
  return "";
#endif
}

bool nvidia_driver_present() {
  std::error_code ec;
  return std::filesystem::exists("/dev/nvidiactl", ec);
}

std::string describe_exit(const SandboxExit& exit) {
  if (exit.timed_out) return "was killed at its deadline (SIGKILL)";
  if (exit.signal != 0)
    return "was killed by signal " + std::to_string(exit.signal) + " (" + strsignal(exit.signal) + ")";
  return "exited with status " + std::to_string(exit.exit_code);
}

Result<std::unique_ptr<SandboxProcess>> SandboxProcess::start(const SandboxOptions& options, int region_fd) {
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });

  if (access(options.executable.c_str(), X_OK) != 0)
    return make_error(Errc::not_found, "the sandbox executable '" + options.executable +
                                           "' is missing: build the drk-sandbox target or set DRK_SANDBOX");
  std::string pattern = (std::filesystem::temp_directory_path() / "drk-sandbox-XXXXXX").string();
  std::vector<char> work_dir(pattern.begin(), pattern.end());
  work_dir.push_back('\0');
  if (!mkdtemp(work_dir.data()))
    return make_error(Errc::io_error, std::string("cannot create the sandbox's directory: ") + std::strerror(errno));

  int request_pipe[2], reply_pipe[2];
  if (pipe2(request_pipe, O_CLOEXEC) != 0) return make_error(Errc::io_error, "pipe2 failed");
  if (pipe2(reply_pipe, O_CLOEXEC) != 0) {
    close(request_pipe[0]);
    close(request_pipe[1]);
    return make_error(Errc::io_error, "pipe2 failed");
  }
  std::string threads = std::to_string(options.max_threads);
  std::string memory_limit = std::to_string(options.gpu_memory_limit_bytes);
  std::vector<const char*> argv;
  for (const auto& word : options.launcher) argv.push_back(word.c_str());
  for (const char* word : {options.executable.c_str(), "--max-threads", threads.c_str()}) argv.push_back(word);
  if (options.gpu_memory_limit_bytes > 0) {
    argv.push_back("--gpu-memory-limit-bytes");
    argv.push_back(memory_limit.c_str());
  }
  if (options.separate_allocations) argv.push_back("--separate-allocations");
  argv.push_back(nullptr);
  int output_pipe[2] = {-1, -1};
  // The checking sandboxes report on their output: compute-sanitizer's, or the guard pages'.
  const bool collect_output = !options.launcher.empty() || options.separate_allocations;
  if (collect_output && pipe2(output_pipe, O_CLOEXEC) != 0) {
    for (int fd : {request_pipe[0], request_pipe[1], reply_pipe[0], reply_pipe[1]}) close(fd);
    return make_error(Errc::io_error, "pipe2 failed");
  }

  std::unique_ptr<SandboxProcess> process(new SandboxProcess());
  process->work_dir_ = work_dir.data();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {request_pipe[0], request_pipe[1], reply_pipe[0], reply_pipe[1], output_pipe[0], output_pipe[1]})
      if (fd >= 0) close(fd);
    return make_error(Errc::io_error, std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0)
    exec_child(options, argv.data(), work_dir.data(), parent, request_pipe[0], reply_pipe[1], region_fd,
               output_pipe[1]);
  close(request_pipe[0]);
  close(reply_pipe[1]);
  if (output_pipe[1] >= 0) close(output_pipe[1]);
  process->output_fd_ = output_pipe[0];
  // Also set here: the parent's kill(-pid) must find the group even if the child has not run yet.
  setpgid(pid, pid);
  process->pid_ = pid;
  process->request_fd_ = request_pipe[1];
  process->reply_fd_ = reply_pipe[0];
  return process;
}

SandboxProcess::~SandboxProcess() {
  if (pid_ > 0) kill_and_reap(false);
  if (request_fd_ >= 0) close(request_fd_);
  if (reply_fd_ >= 0) close(reply_fd_);
  if (output_fd_ >= 0) close(output_fd_);
  std::error_code ec;
  if (!work_dir_.empty()) std::filesystem::remove_all(work_dir_, ec);
}

void SandboxProcess::kill_and_reap(bool timed_out) {
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_ = SandboxExit{};
  exit_.timed_out = timed_out;
  if (!timed_out) {
    if (WIFSIGNALED(status)) exit_.signal = WTERMSIG(status);
    else if (WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
  }
  pid_ = -1;
}

// The pipe closed: the sandbox is dying or dead. Wait a little for its own end (to report the
// signal that really ended it), then make sure.
void SandboxProcess::reap_after_eof() {
  int status = 0;
  pid_t reaped = 0;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    pollfd descriptor{pidfd, POLLIN, 0};
    poll(&descriptor, 1, 2000);
    close(pidfd);
  }
  reaped = waitpid(pid_, &status, WNOHANG);
  if (reaped == pid_) {
    exit_ = SandboxExit{};
    if (WIFSIGNALED(status)) exit_.signal = WTERMSIG(status);
    else if (WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
    kill(-pid_, SIGKILL);  // children the candidate may have left behind
    pid_ = -1;
    return;
  }
  kill_and_reap(false);
}

std::string SandboxProcess::finish(std::chrono::milliseconds timeout) {
  if (request_fd_ >= 0) {
    close(request_fd_);
    request_fd_ = -1;
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The output pipe closes when the sandbox (or its launcher) exits; read it to the end or to the
  // deadline.
  while (output_fd_ >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd descriptor{output_fd_, POLLIN, 0};
    if (poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) break;
    char buffer[4096];
    ssize_t got = read(output_fd_, buffer, sizeof buffer);
    if (got <= 0) break;
    output.append(buffer, static_cast<size_t>(got));
  }
  if (pid_ > 0) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd descriptor{pidfd, POLLIN, 0};
      poll(&descriptor, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
      close(pidfd);
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_ = SandboxExit{};
      if (WIFSIGNALED(status)) exit_.signal = WTERMSIG(status);
      else if (WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
      kill(-pid_, SIGKILL);
      pid_ = -1;
    } else {
      kill_and_reap(true);
    }
  }
  return output;
}

Result<kj::Array<capnp::word>> SandboxProcess::call(capnp::MessageBuilder& request, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return make_error(Errc::peer_unavailable, "the sandbox is not running");
  if (auto written = write_frame(request_fd_, request); !written) {
    if (written.error().code == Errc::peer_unavailable) {
      reap_after_eof();
      return make_error(Errc::sandbox_crashed, "the sandbox " + describe_exit(exit_));
    }
    return written.error();
  }
  auto reply = read_frame(reply_fd_, static_cast<int>(timeout.count()));
  if (reply) return reply;
  switch (reply.error().code) {
    case Errc::timeout:
      kill_and_reap(true);
      return make_error(Errc::timeout, "the sandbox did not answer within " + std::to_string(timeout.count()) +
                                           " ms and was killed");
    case Errc::peer_unavailable:
      reap_after_eof();
      return make_error(Errc::sandbox_crashed, "the sandbox " + describe_exit(exit_));
    default:
      kill_and_reap(false);
      return reply.error();
  }
}

}  // namespace drk::evaluator

