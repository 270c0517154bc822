#include "actors/evaluator/sandbox_confinement.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace drk::evaluator {
namespace {

Error failure(const std::string& step) {
  return make_error(Errc::io_error, "cannot confine the sandbox: " + step + ": " + std::strerror(errno));
}


// A "Vm...:" field of /proc/self/status in bytes; 0 when it cannot be read.
uint64_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10) << 10;
  return 0;
}

bool set_limit(int resource, uint64_t value) {
  rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  return setrlimit(resource, &limit) == 0;
}

// Adds one rule; false (with errno set from libseccomp's result) when it could not.
bool add_rule(scmp_filter_ctx filter, uint32_t action, int syscall, unsigned count = 0,
              scmp_arg_cmp comparison = {}) {
  int status = count == 0 ? seccomp_rule_add(filter, action, syscall, 0)
                          : seccomp_rule_add(filter, action, syscall, 1, comparison);
  if (status == 0) return true;
  errno = -status;
  return false;
}

}  // namespace

ProcessLimits absolute_limits(const ConfinementLimits& limits, uint64_t data_bytes, uint64_t address_space_bytes) {
  ProcessLimits out;
  out.cpu_seconds = limits.cpu_seconds;
  if (limits.memory_bytes > 0) {
    out.data_bytes = data_bytes + limits.memory_bytes;
    if (limits.address_space) out.address_space_bytes = address_space_bytes + limits.memory_bytes;
  }
  out.max_open_files = limits.max_open_files;
  out.max_tasks = limits.max_tasks;
  out.own_user = limits.own_user;
  out.max_file_bytes = limits.max_file_bytes;
  CPU_ZERO(&out.cpus);
  for (uint32_t cpu : limits.cpus) {
    if (cpu >= CPU_SETSIZE) continue;
    CPU_SET(cpu, &out.cpus);
    out.pin_cpus = true;
  }
  return out;
}

uint64_t mapped_data_bytes() { return status_bytes("VmData"); }
uint64_t mapped_address_space_bytes() { return status_bytes("VmSize"); }

const char* confine_process(const ProcessLimits& limits, const char* work_directory, uid_t* uid) {
  if (chdir(work_directory) != 0) return "entering its working directory";
  // Single-threaded here, so every thread it starts from now on inherits the set.
  if (limits.pin_cpus && sched_setaffinity(0, sizeof limits.cpus, &limits.cpus) != 0) return "pinning it to its CPUs";
  if (!set_limit(RLIMIT_CORE, 0)) return "RLIMIT_CORE";
  if (!set_limit(RLIMIT_FSIZE, limits.max_file_bytes)) return "RLIMIT_FSIZE";
  if (!set_limit(RLIMIT_NOFILE, limits.max_open_files)) return "RLIMIT_NOFILE";
  if (!set_limit(RLIMIT_CPU, limits.cpu_seconds)) return "RLIMIT_CPU";
  if (limits.data_bytes > 0 && !set_limit(RLIMIT_DATA, limits.data_bytes)) return "RLIMIT_DATA";
  if (limits.address_space_bytes > 0 && !set_limit(RLIMIT_AS, limits.address_space_bytes)) return "RLIMIT_AS";
  *uid = getuid();
  if (*uid != 0 || !limits.own_user) return nullptr;
  const uid_t own = sandbox_uid_for(getpid());
  if (chown(work_directory, own, own) != 0) return "handing its working directory to its user";
  if (limits.max_tasks > 0 && !set_limit(RLIMIT_NPROC, limits.max_tasks)) return "RLIMIT_NPROC";
  if (setgroups(0, nullptr) != 0) return "dropping supplementary groups";
  if (setresgid(own, own, own) != 0) return "setresgid";
  if (setresuid(own, own, own) != 0) return "setresuid";
  if (getuid() != own || geteuid() != own) return "taking its own user";
  *uid = own;
  return nullptr;
}

Status install_syscall_filter(const SyscallFilterOptions& options) {
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (!filter) return make_error(Errc::io_error, "cannot build the sandbox's syscall filter (seccomp_init)");
  struct Release {
    scmp_filter_ctx filter;
    ~Release() { seccomp_release(filter); }
  } release{filter};
  // Every thread of the process, those LibTorch's and CUDA's runtimes started already included.
  if (int status = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1); status != 0) {
    errno = -status;
    return failure("synchronising the filter over threads");
  }
  const auto self32 = static_cast<scmp_datum_t>(static_cast<uint32_t>(options.self));
  const uint32_t kill_process = SCMP_ACT_KILL_PROCESS;
  const uint32_t not_permitted = SCMP_ACT_ERRNO(EPERM);
  bool added = true;
  if (!options.allow_processes) {
    for (int call : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat)})
      added = added && add_rule(filter, kill_process, call);
    // A thread is a clone with CLONE_THREAD; anything else is a process. clone3 passes its flags
    // in memory a filter cannot read: refused as unknown, so that glibc falls back to clone.
    added = added && add_rule(filter, kill_process, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    added = added && add_rule(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
  }
  for (int call : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(kcmp),
                   SCMP_SYS(pidfd_getfd)})
    added = added && add_rule(filter, kill_process, call);
  // Signals to itself only.
  added = added && add_rule(filter, not_permitted, SCMP_SYS(kill), 1, SCMP_A0_32(SCMP_CMP_NE, self32)) &&
          add_rule(filter, not_permitted, SCMP_SYS(tgkill), 1, SCMP_A0_32(SCMP_CMP_NE, self32)) &&
          add_rule(filter, not_permitted, SCMP_SYS(rt_sigqueueinfo), 1, SCMP_A0_32(SCMP_CMP_NE, self32)) &&
          add_rule(filter, not_permitted, SCMP_SYS(rt_tgsigqueueinfo), 1, SCMP_A0_32(SCMP_CMP_NE, self32));
  for (int call : {SCMP_SYS(tkill), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal)})
    added = added && add_rule(filter, not_permitted, call);
  // No network (the network namespace is empty already), and no Unix socket to the runtime's
  // ipc:// endpoints either.
  added = added && add_rule(filter, not_permitted, SCMP_SYS(socket));
  // Files: read only. Opening for writing, creating, truncating are refused; so are the calls
  // that change names, links, modes and times (allow_file_writes: the Triton warm-up's compilers
  // may), owners and extended attributes, and new shared memory.
  if (!options.allow_file_writes) {
    std::vector<unsigned> write_flags = {unsigned(O_WRONLY), unsigned(O_CREAT), unsigned(O_TRUNC), unsigned(O_APPEND)};
    if (!options.allow_read_write_opens) write_flags.push_back(unsigned(O_RDWR));
    for (unsigned flag : write_flags) {
      added = added &&
              add_rule(filter, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag));
      added = added &&
              add_rule(filter, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag));
    }
    for (int call : {SCMP_SYS(creat), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
                     SCMP_SYS(renameat2), SCMP_SYS(rmdir), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(link),
                     SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat), SCMP_SYS(chmod), SCMP_SYS(fchmod),
                     SCMP_SYS(fchmodat), SCMP_SYS(truncate), SCMP_SYS(ftruncate), SCMP_SYS(fallocate),
                     SCMP_SYS(utimes), SCMP_SYS(utimensat), SCMP_SYS(futimesat)})
      added = added && add_rule(filter, not_permitted, call);
  }
  added = added && add_rule(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2));
  if (!options.allow_shared_anonymous_memory || options.allow_processes)
    added = added && add_rule(filter, not_permitted, SCMP_SYS(mmap), 1,
                              SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_SHARED | MAP_ANONYMOUS, MAP_SHARED | MAP_ANONYMOUS));
  for (int call :
       {SCMP_SYS(open_by_handle_at), SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat),
        SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr),
        SCMP_SYS(fsetxattr), SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
        SCMP_SYS(memfd_create), SCMP_SYS(shmget), SCMP_SYS(shmat), SCMP_SYS(setrlimit), SCMP_SYS(prlimit64),
        SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root),
        SCMP_SYS(chroot), SCMP_SYS(bpf), SCMP_SYS(userfaultfd), SCMP_SYS(keyctl), SCMP_SYS(add_key),
        SCMP_SYS(request_key), SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
        SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(settimeofday), SCMP_SYS(clock_settime),
        SCMP_SYS(clock_adjtime), SCMP_SYS(adjtimex), SCMP_SYS(sched_setaffinity)})
    added = added && add_rule(filter, not_permitted, call);
  if (!added) return failure("adding a rule to the syscall filter");
  if (int status = seccomp_load(filter); status != 0) {
    errno = -status;
    return failure("loading the syscall filter (seccomp)");
  }
  return {};
}

Result<uint32_t> kill_processes_of_user(uid_t uid) {
  if (uid == 0 || uid == getuid())
    return make_error(Errc::invalid_argument, "refusing to kill every process of uid " + std::to_string(uid));
  pid_t helper = fork();
  if (helper < 0) return make_error(Errc::io_error, std::string("fork failed: ") + std::strerror(errno));
  if (helper == 0) {
    // The helper: async-signal-safe calls only (the caller may have threads).
    if (setresuid(uid, uid, uid) != 0) _exit(255);
    int rounds = 0;
    while (rounds < 100 && kill(-1, SIGKILL) == 0) {
      ++rounds;
      const timespec pause{0, 1000000};
      nanosleep(&pause, nullptr);
    }
    _exit(rounds);
  }
  int status = 0;
  while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 255)
    return make_error(Errc::io_error, "the helper that ends the processes of uid " + std::to_string(uid) + " failed");
  return static_cast<uint32_t>(WEXITSTATUS(status));
}

uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t default_sandbox_memory_bytes(uint32_t sandboxes) {
  constexpr uint64_t kFloor = uint64_t{1} << 30;
  return std::max(kFloor, machine_memory_bytes() / 2 / std::max<uint32_t>(sandboxes, 1));
}

}  // namespace drk::evaluator
