// The processes of this machine whose command lines match, read from /proc: how the tests find
// the `drk host` processes a run started (to kill or stop one).
//
// Thread-safety: reentrant. A process that ends while it is read is skipped.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace drk::testing {

inline std::vector<pid_t> processes_where(const std::function<bool(const std::vector<std::string>& argv)>& matches) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atol(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> argv;
    for (std::string arg; std::getline(file, arg, '\0');) argv.push_back(arg);
    if (!argv.empty() && matches(argv)) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

// True when argv holds `option value` as two consecutive arguments.
inline bool has_option(const std::vector<std::string>& argv, const std::string& option, const std::string& value) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == option && argv[i + 1] == value) return true;
  }
  return false;
}

}  // namespace drk::testing
