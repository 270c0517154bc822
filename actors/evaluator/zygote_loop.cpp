#include "actors/evaluator/zygote_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include <capnp/serialize.h>

#include "actors/evaluator/descriptor_channel.h"
#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/sandbox_confinement.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {
namespace {

constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kRegionFd = 5;

struct Child {
  uint64_t id = 0;
  uid_t uid = 0;
};

void send_event(int control_fd, const std::function<void(msg::ZygoteEvent::Builder)>& fill, int descriptor = -1) {
  capnp::MallocMessageBuilder message;
  fill(message.initRoot<msg::ZygoteEvent>());
  if (descriptor >= 0) {
    const int descriptors[] = {descriptor};
    (void)send_with_descriptors(control_fd, message, descriptors);
  } else {
    (void)send_with_descriptors(control_fd, message);
  }
}

void send_failed(int control_fd, uint64_t id, const std::string& why) {
  send_event(control_fd, [&](msg::ZygoteEvent::Builder event) {
    auto failed = event.initFailed();
    failed.setId(id);
    failed.setMessage(why);
  });
}

ConfinementLimits limits_of(msg::SandboxLimits::Reader limits) {
  ConfinementLimits out;
  out.cpu_seconds = limits.getCpuSeconds();
  out.memory_bytes = limits.getMemoryBytes();
  out.address_space = limits.getAddressSpace();
  out.max_open_files = limits.getMaxOpenFiles();
  out.max_tasks = limits.getMaxTasks();
  out.own_user = limits.getOwnUser();
  for (uint32_t cpu : limits.getCpus()) out.cpus.push_back(cpu);
  return out;
}

// In the forked child: the descriptors into place, everything else closed, then confined.
[[noreturn]] void become_child(pid_t zygote, const sigset_t& mask, std::vector<UniqueFd>& descriptors,
                               msg::ZygoteSpawn::Reader spawn,
                               const std::function<int(const ZygoteChild&)>& become_sandbox) {
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != zygote) _exit(126);
  setpgid(0, 0);
  // Above the targets first, so that none is overwritten by another.
  int moved[3];
  for (int i = 0; i < 3; ++i) {
    moved[i] = fcntl(descriptors[i].get(), F_DUPFD, 64);
    if (moved[i] < 0) _exit(125);
  }
  for (int i = 0; i < 3; ++i)
    if (dup2(moved[i], kRequestFd + i) < 0) _exit(125);
  if (syscall(SYS_close_range, kRegionFd + 1, ~0U, 0) != 0)
    for (int fd = kRegionFd + 1; fd < 4096; ++fd) close(fd);
  for (auto& descriptor : descriptors) descriptor.release();  // closed above
  ZygoteChild child;
  child.max_threads = spawn.getMaxThreads();
  child.gpu_memory_limit_bytes = spawn.getGpuMemoryLimitBytes();
  const ProcessLimits limits =
      absolute_limits(limits_of(spawn.getLimits()), mapped_data_bytes(), mapped_address_space_bytes());
  uid_t uid = 0;
  if (confine_process(limits, spawn.getWorkDirectory().cStr(), &uid) != nullptr)
    _exit(kConfinementFailedExit);  // nothing runs unconfined
  std::exit(become_sandbox(child));
}

}  // namespace

int run_zygote(int control_fd, const std::function<int(const ZygoteChild&)>& become_sandbox, const ForkHooks& hooks) {
  sigset_t child_signals, previous;
  sigemptyset(&child_signals);
  sigaddset(&child_signals, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signals, &previous);
  UniqueFd reaped_signal(signalfd(-1, &child_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!reaped_signal) return 2;
  const pid_t self = getpid();
  std::map<pid_t, Child> children;

  auto reap = [&] {
    signalfd_siginfo info;
    while (read(reaped_signal.get(), &info, sizeof info) == sizeof info) {
    }
    int status = 0;
    pid_t pid = 0;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      auto found = children.find(pid);
      if (found == children.end()) continue;
      uint32_t leftovers = 0;
      if (found->second.uid != getuid())
        if (auto killed = kill_processes_of_user(found->second.uid); killed) leftovers = *killed;
      const uint64_t id = found->second.id;
      children.erase(found);
      send_event(control_fd, [&](msg::ZygoteEvent::Builder event) {
        auto exited = event.initExited();
        exited.setPid(pid);
        exited.setSignal(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        exited.setExitCode(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
        exited.setLeftovers(leftovers);
        exited.setId(id);
      });
    }
  };

  for (;;) {
    pollfd descriptors[2] = {{control_fd, POLLIN, 0}, {reaped_signal.get(), POLLIN, 0}};
    if (poll(descriptors, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (descriptors[1].revents != 0) reap();
    if (descriptors[0].revents == 0) continue;
    auto received = receive_with_descriptors(control_fd, 0);
    if (!received) {
      if (received.error().code == Errc::timeout) continue;
      if (received.error().code == Errc::protocol_error) continue;  // refused; its descriptors are closed
      break;  // the Evaluator is gone
    }
    capnp::FlatArrayMessageReader reader(received->words, frame_reader_options());
    auto spawn = reader.getRoot<msg::ZygoteSpawn>();
    if (received->descriptors.size() != 3) {
      send_failed(control_fd, spawn.getId(), "a spawn request needs 3 descriptors (request, reply, region)");
      continue;
    }
    if (hooks.before) hooks.before();
    const pid_t pid = fork();
    if (pid == 0 && hooks.after_in_child) hooks.after_in_child();
    if (pid != 0 && hooks.after_in_parent) hooks.after_in_parent();
    if (pid < 0) {
      send_failed(control_fd, spawn.getId(), std::string("fork failed: ") + std::strerror(errno));
      continue;
    }
    if (pid == 0) {
      reaped_signal.reset();
      close(control_fd);  // the loop's caller owns it; this child never returns to that owner
      become_child(self, previous, received->descriptors, spawn, become_sandbox);
    }
    const bool own_user = getuid() == 0 && spawn.getLimits().getOwnUser();
    const uid_t uid = own_user ? sandbox_uid_for(pid) : getuid();
    children[pid] = Child{spawn.getId(), uid};
    UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    send_event(
        control_fd,
        [&](msg::ZygoteEvent::Builder event) {
          auto spawned = event.initSpawned();
          spawned.setId(spawn.getId());
          spawned.setPid(pid);
          spawned.setUid(uid);
        },
        pidfd.get());
  }
  for (const auto& [pid, child] : children) kill(pid, SIGKILL);
  for (const auto& [pid, child] : children) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (child.uid != getuid()) (void)kill_processes_of_user(child.uid);
  }
  return 0;
}

}  // namespace drk::evaluator
