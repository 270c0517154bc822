// The path of the program this process runs (/proc/self/exe): what a process runs again to start
// its children (`drk host`) or writes into a script (`drk slurm`). Empty when Linux cannot say
// (no /proc, or the file was removed since). Thread-safety: reentrant.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace drk {

inline std::string this_program_path() {
  std::error_code error;
  const std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : path.string();
}

}  // namespace drk
