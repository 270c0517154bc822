#include "actors/evaluator/sandbox_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <mutex>
#include <vector>

#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/sandbox_launch.h"
#include "actors/evaluator/zygote_loop.h"

#ifndef DRK_SANDBOX_PATH
#error "DRK_SANDBOX_PATH must be defined by the build (actors/evaluator/CMakeLists.txt)"
#endif

namespace drk::evaluator {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kSpawnTimeout = std::chrono::seconds(10);
constexpr auto kExitWait = std::chrono::seconds(5);

SandboxExit exit_of_status(int status) {
  SandboxExit exit;
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  else if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  return exit;
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
  if (exit.signal == SIGSYS) return "was killed for a system call the sandbox forbids (SIGSYS: a new process, tracing)";
  if (exit.signal != 0)
    return "was killed by signal " + std::to_string(exit.signal) + " (" + strsignal(exit.signal) + ")";
  if (exit.exit_code == kConfinementFailedExit) return "could not be confined (its limits or its user), so it ran nothing";
  return "exited with status " + std::to_string(exit.exit_code);
}

ConfinementLimits confinement_limits(const SandboxOptions& options) {
  ConfinementLimits limits;
  limits.cpu_seconds = options.cpu_seconds;
  limits.memory_bytes =
      options.memory_bytes > 0 ? options.memory_bytes : default_sandbox_memory_bytes(options.sandboxes_on_machine);
  limits.address_space = options.limit_address_space;
  limits.max_open_files = options.max_open_files;
  limits.max_tasks = static_cast<uint64_t>(std::max(options.max_threads, 1)) + options.extra_tasks;
  limits.own_user = options.own_user;
  limits.cpus = options.cpus;
  return limits;
}

Result<SandboxProcess::Unstarted> SandboxProcess::prepare() {
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  auto work_dir = TemporaryDirectory::create("drk-sandbox");
  if (!work_dir) return work_dir.error();
  Unstarted unstarted;
  unstarted.process.reset(new SandboxProcess());
  unstarted.process->work_dir_ = std::move(*work_dir);
  auto request = open_pipe("the sandbox's requests");
  if (!request) return request.error();
  auto reply = open_pipe("the sandbox's replies");
  if (!reply) return reply.error();
  unstarted.request_read = std::move(request->read);
  unstarted.process->request_fd_ = std::move(request->write);
  unstarted.reply_write = std::move(reply->write);
  unstarted.process->reply_fd_ = std::move(reply->read);
  return unstarted;
}

Result<std::unique_ptr<SandboxProcess>> SandboxProcess::spawn(const std::shared_ptr<SandboxZygote>& zygote,
                                                              const SandboxOptions& options, int region_fd) {
  auto prepared = prepare();
  if (!prepared) return prepared.error();
  auto& process = prepared->process;
  SpawnRequest spawn;
  spawn.work_directory = process->work_dir_.path();
  spawn.max_threads = options.max_threads;
  spawn.gpu_memory_limit_bytes = options.gpu_memory_limit_bytes;
  spawn.limits = confinement_limits(options);
  spawn.request_read = prepared->request_read.get();
  spawn.reply_write = prepared->reply_write.get();
  spawn.region_fd = region_fd;
  auto spawned = zygote->spawn(spawn, kSpawnTimeout);
  if (!spawned) return spawned.error();
  process->pid_ = spawned->pid;
  process->uid_ = spawned->uid;
  process->pidfd_ = std::move(spawned->pidfd);
  process->zygote_ = zygote;
  process->spawn_id_ = spawned->id;
  return std::move(process);
}

Result<std::unique_ptr<SandboxProcess>> SandboxProcess::start(const SandboxOptions& options, int region_fd) {
  if (access(options.executable.c_str(), X_OK) != 0)
    return make_error(Errc::not_found, "the sandbox executable '" + options.executable +
                                           "' is missing: build the drk-sandbox target or set DRK_SANDBOX");
  auto prepared = prepare();
  if (!prepared) return prepared.error();
  auto& process = prepared->process;
  auto output = open_pipe("the sandbox's output");
  if (!output) return output.error();
  LaunchSpec spec;
  spec.argv = options.launcher;
  for (const std::string& word : {options.executable, std::string("--max-threads"), std::to_string(options.max_threads)})
    spec.argv.push_back(word);
  if (options.gpu_memory_limit_bytes > 0) {
    spec.argv.push_back("--gpu-memory-limit-bytes");
    spec.argv.push_back(std::to_string(options.gpu_memory_limit_bytes));
  }
  if (options.separate_allocations) spec.argv.push_back("--separate-allocations");
  spec.argv.insert(spec.argv.end(), options.program_arguments.begin(), options.program_arguments.end());
  // A launcher starts processes of its own: the sandbox under it is left without the filter's ban.
  if (!options.launcher.empty()) spec.argv.push_back("--allow-processes");
  if (options.allow_compilers) spec.argv.push_back("--allow-compilers");
  const bool own_user = getuid() == 0 && options.own_user;
  spec.descriptors = {prepared->request_read.get(), prepared->reply_write.get(), region_fd};
  spec.output_fd = output->write.get();
  // A new image: its libraries are mapped after the limits are set. A launcher writes files
  // and opens descriptors of its own.
  ConfinementLimits limits = confinement_limits(options);
  constexpr uint64_t kImageAllowance = uint64_t{8} << 30;
  ProcessLimits absolute = absolute_limits(limits, uint64_t{1} << 30, kImageAllowance);
  if (!options.launcher.empty()) {
    absolute.max_file_bytes = uint64_t{1} << 30;
    absolute.max_open_files = std::max<uint64_t>(options.max_open_files, 4096);
    absolute.max_tasks = 0;
  }
  // Compilers write their output and start a few processes each (gcc: cc1, as, ld).
  if (options.allow_compilers) {
    absolute.max_file_bytes = uint64_t{256} << 20;
    absolute.max_open_files = std::max<uint64_t>(options.max_open_files, 1024);
    if (absolute.max_tasks > 0) absolute.max_tasks += 64;
  }
  spec.limits = absolute;
  spec.work_directory = process->work_dir_.path();
  auto pid = launch_sandbox(spec);
  if (!pid) return pid.error();
  process->pid_ = *pid;
  process->uid_ = own_user ? sandbox_uid_for(*pid) : getuid();
  process->pidfd_.reset(static_cast<int>(syscall(SYS_pidfd_open, *pid, 0)));
  process->output_fd_ = std::move(output->read);
  return std::move(process);
}

SandboxProcess::~SandboxProcess() {
  if (pid_ > 0) {
    if (zygote_) {
      // The zygote reaps it and ends whatever still runs as its user; nobody waits for that.
      send_kill();
      zygote_->forget(spawn_id_);
    } else {
      kill_and_reap(false);
    }
  }
}

void SandboxProcess::send_kill() {
  if (pidfd_) syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
  else kill(pid_, SIGKILL);
  if (!zygote_) kill(-pid_, SIGKILL);  // a launcher's processes too
}

bool SandboxProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  if (zygote_) {
    auto ended = zygote_->wait_exit(spawn_id_, timeout);
    if (!ended) return false;
    exit_ = *ended;
  } else {
    if (pidfd_) {
      pollfd descriptor{pidfd_.get(), POLLIN, 0};
      poll(&descriptor, 1, static_cast<int>(timeout.count()));
    }
    int status = 0;
    if (waitpid(pid_, &status, pidfd_ ? WNOHANG : 0) != pid_) return false;
    exit_ = exit_of_status(status);
    kill(-pid_, SIGKILL);  // the launcher's children
    if (uid_ != getuid()) (void)kill_processes_of_user(uid_);
  }
  pid_ = -1;
  pidfd_.reset();
  return true;
}

void SandboxProcess::kill_and_reap(bool timed_out) {
  send_kill();
  if (!wait_for_exit(kExitWait)) {
    exit_ = SandboxExit{};  // gone without a report (its zygote died): SIGKILL reached it either way
    exit_.signal = SIGKILL;
    if (!zygote_) {
      int status = 0;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
    pidfd_.reset();
  }
  if (timed_out) exit_ = SandboxExit{0, 0, true};
}

// The pipe closed: the sandbox is dying or dead. Wait a little for its own end (to report the
// signal that really ended it), then make sure.
void SandboxProcess::reap_after_eof() {
  if (!wait_for_exit(std::chrono::milliseconds(2000))) kill_and_reap(false);
}

std::string SandboxProcess::finish(std::chrono::milliseconds timeout) {
  request_fd_.reset();
  std::string output;
  const auto deadline = Clock::now() + timeout;
  // The output pipe closes when the sandbox (or its launcher) exits; read it to the end or to the
  // deadline.
  while (output_fd_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd descriptor{output_fd_.get(), POLLIN, 0};
    if (poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) break;
    char buffer[4096];
    ssize_t got = read(output_fd_.get(), buffer, sizeof buffer);
    if (got <= 0) break;
    output.append(buffer, static_cast<size_t>(got));
  }
  if (pid_ > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!wait_for_exit(std::max(left, std::chrono::milliseconds(0)))) kill_and_reap(true);
  }
  return output;
}

std::optional<uint64_t> process_cpu_time_ns(pid_t pid) {
  clockid_t clock;
  timespec now{};
  if (pid <= 0 || clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &now) != 0) return std::nullopt;
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

std::optional<uint64_t> SandboxProcess::cpu_time_ns() const { return process_cpu_time_ns(pid_); }

bool SandboxProcess::asleep() const {
  if (pid_ <= 0) return true;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
    // "TID (COMM) STATE ...": the state follows the last ')', since COMM may hold one.
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') return false;
  }
  return true;
}

bool SandboxProcess::wait_until_asleep(std::chrono::microseconds limit) const {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    if (asleep()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Result<std::string> SandboxProcess::stage_library(const std::string& library_path, const std::string& staged_name) {
  const auto staged = std::filesystem::path(work_dir_.path()) / staged_name;
  std::error_code ec;
  std::filesystem::copy_file(library_path, staged, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return make_error(Errc::io_error, "cannot copy the candidate '" + library_path + "' into the sandbox's directory: " + ec.message());
  std::filesystem::permissions(staged, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read | std::filesystem::perms::owner_exec |
                                           std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
                               ec);
  return staged.string();
}

Result<std::string> SandboxProcess::stage_directory(const std::string& directory, const std::string& staged_name) {
  std::error_code ec;
  const std::filesystem::path staged = std::filesystem::path(work_dir_.path()) / staged_name;
  std::filesystem::copy(directory, staged,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return make_error(Errc::io_error, "cannot copy '" + directory + "' into the sandbox's directory: " + ec.message());
  return staged.string();
}

Result<kj::Array<capnp::word>> SandboxProcess::call(capnp::MessageBuilder& request, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return make_error(Errc::peer_unavailable, "the sandbox is not running");
  if (auto written = write_frame(request_fd_.get(), request); !written) {
    if (written.error().code == Errc::peer_unavailable) {
      reap_after_eof();
      return make_error(Errc::sandbox_crashed, "the sandbox " + describe_exit(exit_));
    }
    return written.error();
  }
  auto reply = read_frame(reply_fd_.get(), static_cast<int>(timeout.count()));
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
