#include "tools/drk/kernelbench_names.h"

#include <regex>
#include <string>

namespace drk::tools {
namespace {

std::optional<int> number_of(const std::string& name, const std::regex& pattern) {
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  return std::stoi(match[1]);
}

}  // namespace

std::optional<int> kernelbench_level_of_folder(const std::filesystem::path& folder) {
  static const std::regex kLevel("level([0-9]+)");
  return number_of(folder.filename().string(), kLevel);
}

std::optional<int> kernelbench_problem_id_of_file(const std::filesystem::path& file) {
  static const std::regex kProblem("([0-9]+)_.*\\.py");
  return number_of(file.filename().string(), kProblem);
}

}  // namespace drk::tools
