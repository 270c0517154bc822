#include "actors/evaluator/sandbox_launch.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "actors/evaluator/zygote_loop.h"

namespace drk::evaluator {
namespace {

constexpr int kFirstPlacedFd = 3;

// In the forked child, up to exec: descriptors stay raw ints here (no UniqueFd), since only
// async-signal-safe calls may run between fork and exec.
[[noreturn]] void set_up_and_exec(const LaunchSpec& spec, const char* const* argv, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(126);
  setpgid(0, 0);
  // Every descriptor above the targets first, so that none is overwritten by another.
  int moved[8];
  const size_t count = spec.descriptors.size();
  if (count > 8) _exit(125);
  for (size_t i = 0; i < count; ++i)
    if ((moved[i] = fcntl(spec.descriptors[i], F_DUPFD, 64)) < 0) _exit(125);
  int moved_output = spec.output_fd >= 0 ? fcntl(spec.output_fd, F_DUPFD, 64) : -1;
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd < 0) _exit(125);
  dup2(null_fd, 0);
  dup2(moved_output >= 0 ? moved_output : null_fd, 1);
  dup2(moved_output >= 0 ? moved_output : null_fd, 2);
  for (size_t i = 0; i < count; ++i)
    if (dup2(moved[i], kFirstPlacedFd + static_cast<int>(i)) < 0) _exit(125);
  const unsigned first_closed = kFirstPlacedFd + static_cast<unsigned>(count);
  if (syscall(SYS_close_range, first_closed, ~0U, 0) != 0)
    for (int fd = static_cast<int>(first_closed); fd < 4096; ++fd) close(fd);
  if (unshare(CLONE_NEWNET) != 0) unshare(CLONE_NEWUSER | CLONE_NEWNET);
  if (spec.limits) {
    uid_t uid = 0;
    if (confine_process(*spec.limits, spec.work_directory.c_str(), &uid) != nullptr) _exit(kConfinementFailedExit);
  } else {
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
  }
  execv(argv[0], const_cast<char* const*>(argv));
  _exit(127);
}

}  // namespace

Result<pid_t> launch_sandbox(const LaunchSpec& spec) {
  if (spec.argv.empty() || access(spec.argv[0].c_str(), X_OK) != 0)
    return make_error(Errc::not_found, "the sandbox executable '" + (spec.argv.empty() ? "" : spec.argv[0]) +
                                           "' is missing: build the drk-sandbox target or set DRK_SANDBOX");
  std::vector<const char*> argv;
  for (const auto& word : spec.argv) argv.push_back(word.c_str());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return make_error(Errc::io_error, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) set_up_and_exec(spec, argv.data(), parent);
  // Also set here: the parent's kill(-pid) must find the group even if the child has not run yet.
  setpgid(pid, pid);
  return pid;
}

}  // namespace drk::evaluator
