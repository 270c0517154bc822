// The sandbox's syscall filter on files and processes: a candidate's sandbox may create, change or
// remove no file and start no process; the Triton warm-up's (allow_file_writes with
// allow_processes) may do both, the compilers it runs included.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <string>

#include "actors/evaluator/sandbox_confinement.h"
#include "base/temporary_directory.h"
#include "tests/doctest_drk.h"

using namespace drk;
using namespace drk::evaluator;

namespace {

// Runs `body` in a child under the filter of `options`; its wait status.
template <typename Body>
int under_filter(SyscallFilterOptions options, Body body) {
  const pid_t child = fork();
  DRK_REQUIRE(child >= 0);
  if (child == 0) {
    options.self = getpid();
    if (!install_syscall_filter(options)) _exit(100);
    _exit(body());
  }
  int status = 0;
  DRK_REQUIRE(waitpid(child, &status, 0) == child);
  return status;
}

}  // namespace

DRK_TEST_CASE("a candidate's sandbox creates, renames, changes and removes no file") {
  auto directory = TemporaryDirectory::create("drk-test-filter");
  DRK_REQUIRE(directory);
  const std::string existing = directory->path() + "/existing";
  close(open(existing.c_str(), O_CREAT | O_WRONLY, 0644));
  const std::string fresh = directory->path() + "/fresh";
  const int status = under_filter({}, [&] {
    if (open(fresh.c_str(), O_CREAT | O_WRONLY, 0644) >= 0 || errno != EACCES) return 1;
    if (rename(existing.c_str(), fresh.c_str()) == 0) return 2;
    if (chmod(existing.c_str(), 0777) == 0) return 3;
    if (unlink(existing.c_str()) == 0) return 4;
    if (mkdir(fresh.c_str(), 0755) == 0) return 5;
    return 0;
  });
  DRK_REQUIRE(WIFEXITED(status));
  DRK_CHECK(WEXITSTATUS(status) == 0);
  DRK_CHECK(std::filesystem::exists(existing));
  DRK_CHECK_FALSE(std::filesystem::exists(fresh));
}

DRK_TEST_CASE("a candidate's sandbox that starts a process is ended by the filter") {
  const int status = under_filter({}, [] {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    return 1;
  });
  DRK_REQUIRE(WIFSIGNALED(status));
  DRK_CHECK(WTERMSIG(status) == SIGSYS);
}

DRK_TEST_CASE("the Triton warm-up's sandbox writes files and runs a compiler's processes") {
  auto directory = TemporaryDirectory::create("drk-test-filter");
  DRK_REQUIRE(directory);
  const std::string folder = directory->path() + "/triton-cache";
  const std::string written = folder + "/kernel.cubin";
  SyscallFilterOptions options;
  options.allow_processes = true;
  options.allow_file_writes = true;
  const int status = under_filter(options, [&] {
    if (mkdir(folder.c_str(), 0755) != 0) return 1;
    const std::string partial = written + ".tmp";
    const int fd = open(partial.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "cubin", 5) != 5) return 2;
    close(fd);
    if (rename(partial.c_str(), written.c_str()) != 0) return 3;
    const std::string script = "test -s '" + written + "' && touch '" + folder + "/done'";
    const pid_t shell = fork();
    if (shell == 0) {
      execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int shell_status = 0;
    if (shell < 0 || waitpid(shell, &shell_status, 0) != shell) return 4;
    return WIFEXITED(shell_status) ? WEXITSTATUS(shell_status) == 0 ? 0 : 5 : 6;
  });
  DRK_REQUIRE(WIFEXITED(status));
  DRK_CHECK(WEXITSTATUS(status) == 0);
  DRK_CHECK(std::filesystem::exists(written));
  DRK_CHECK(std::filesystem::exists(folder + "/done"));
}
