#include "kernels/compile/compiler_log.h"

namespace drk::compile {

std::string compiler_log(std::string output, const std::vector<std::pair<std::string, std::string>>& renames,
                         size_t max_bytes) {
  for (const auto& [from, to] : renames) {
    if (from.empty()) continue;
    for (size_t at = output.find(from); at != std::string::npos; at = output.find(from, at + to.size()))
      output.replace(at, from.size(), to);
  }
  if (output.size() > max_bytes) output = output.substr(0, max_bytes) + "\n[compiler output truncated]";
  return output;
}

}  // namespace drk::compile
