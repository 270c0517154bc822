// A CPU evaluation's sandbox runs on max_threads CPUs: evaluation_cpus spreads the engines over
// the machine, and a confined sandbox keeps the CPUs it was given: its threads inherit them and
// it cannot widen them, so threads beyond max_threads gain nothing.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <thread>

#include "actors/evaluator/evaluation_cpus.h"
#include "actors/evaluator/sandbox_confinement.h"
#include "tests/doctest_drk.h"

using namespace drk::evaluator;

namespace {

int allowed_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  DRK_REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  return CPU_COUNT(&set);
}

}  // namespace

DRK_TEST_CASE("evaluations take CPUs in turn, and a set as large as the machine is the machine") {
  const int machine = allowed_cpu_count();
  const auto one = evaluation_cpus(1);
  DRK_REQUIRE(one.size() == 1);
  if (machine >= 2) DRK_CHECK(evaluation_cpus(1) != one);
  DRK_CHECK(static_cast<int>(evaluation_cpus(machine).size()) == machine);
  DRK_CHECK(static_cast<int>(evaluation_cpus(machine + 3).size()) == machine);
}

DRK_TEST_CASE("a confined sandbox keeps its one CPU: its threads inherit it and widening it is refused") {
  const auto cpus = evaluation_cpus(1);
  ConfinementLimits limits;
  limits.own_user = false;
  limits.cpus = cpus;
  const ProcessLimits absolute = absolute_limits(limits, mapped_data_bytes(), mapped_address_space_bytes());
  const std::string directory = std::filesystem::temp_directory_path().string();
  const pid_t child = fork();
  DRK_REQUIRE(child >= 0);
  if (child == 0) {
    uid_t uid = 0;
    if (confine_process(absolute, directory.c_str(), &uid) != nullptr) _exit(10);
    SyscallFilterOptions filter;
    filter.self = getpid();
    if (!install_syscall_filter(filter)) _exit(11);
    int thread_cpus = 0;
    std::thread([&] {
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity(0, sizeof set, &set) == 0) thread_cpus = CPU_COUNT(&set);
    }).join();
    if (thread_cpus != 1) _exit(12);
    cpu_set_t every;
    CPU_ZERO(&every);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &every);
    if (sched_setaffinity(0, sizeof every, &every) == 0 || errno != EPERM) _exit(13);
    _exit(0);
  }
  int status = 0;
  DRK_REQUIRE(waitpid(child, &status, 0) == child);
  DRK_REQUIRE(WIFEXITED(status));
  // 10: not confined; 11: no filter; 12: a thread ran beyond the CPU; 13: the set was widened.
  DRK_CHECK(WEXITSTATUS(status) == 0);
}
