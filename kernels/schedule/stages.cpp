#include "kernels/schedule/stages.h"

namespace drk::schedule {
namespace {

std::string trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

Status check_stage(const std::string& stage, std::string_view whole) {
  if (stage.empty()) {
    return make_error(Errc::parse_error, "stage list '" + std::string(whole) +
                                             "' has an empty stage: write 'v' for identity");
  }
  for (char character : stage) {
    if (character == ';' || character == '{' || character == '}' || character == '#' ||
        character == '"' || character == '\'' || character == '\\' || character == '`') {
      return make_error(Errc::parse_error,
                        "stage '" + stage + "' holds '" + std::string(1, character) +
                            "': a stage is one float expression of v, without statements");
    }
  }
  if (stage.find("//") != std::string::npos || stage.find("/*") != std::string::npos) {
    return make_error(Errc::parse_error,
                      "stage '" + stage + "' holds a comment: a stage is one float expression");
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> parse_stages(std::string_view text) {
  std::vector<std::string> stages;
  size_t start = 0;
  for (size_t index = 0; index <= text.size(); ++index) {
    const bool at_end = index == text.size();
    if (!at_end) {
      if (text[index] != '|') continue;
      const bool doubled = (index + 1 < text.size() && text[index + 1] == '|') ||
                           (index > 0 && text[index - 1] == '|');
      if (doubled) continue;
    }
    std::string stage = trim(text.substr(start, index - start));
    if (auto status = check_stage(stage, text); !status) return status.error();
    if (stage != "v") stages.push_back(std::move(stage));
    start = index + 1;
  }
  return stages;
}

}  // namespace drk::schedule
