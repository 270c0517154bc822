#include "actors/evaluator/evaluation_cpus.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>

namespace drk::evaluator {
namespace {

std::vector<uint32_t> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<uint32_t> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace

std::vector<uint32_t> evaluation_cpus(int count) {
  const std::vector<uint32_t> allowed = allowed_cpus();
  if (allowed.empty() || count <= 0 || static_cast<size_t>(count) >= allowed.size()) return allowed;
  static std::atomic<uint64_t> next{static_cast<uint64_t>(getpid())};
  const uint64_t first = next.fetch_add(static_cast<uint64_t>(count));
  std::vector<uint32_t> chosen;
  for (int i = 0; i < count; ++i) chosen.push_back(allowed[(first + static_cast<uint64_t>(i)) % allowed.size()]);
  return chosen;
}

}  // namespace drk::evaluator
