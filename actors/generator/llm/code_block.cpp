#include "actors/generator/llm/code_block.h"

#include <optional>

namespace drk::generator {
namespace {

struct Fence {
  char mark = '`';
  size_t length = 0;
  std::string_view info;  // what follows the fence on its line
};

// The fence that `line` is, if it is one.
std::optional<Fence> fence_of(std::string_view line) {
  size_t indent = 0;
  while (indent < line.size() && indent < 4 && line[indent] == ' ') ++indent;
  if (indent > 3 || indent >= line.size()) return std::nullopt;
  const char mark = line[indent];
  if (mark != '`' && mark != '~') return std::nullopt;
  size_t end = indent;
  while (end < line.size() && line[end] == mark) ++end;
  if (end - indent < 3) return std::nullopt;
  Fence fence{mark, end - indent, line.substr(end)};
  // CommonMark: a backtick fence's info string holds no backtick (that is inline code).
  if (mark == '`' && fence.info.find('`') != std::string_view::npos) return std::nullopt;
  return fence;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace

Result<CodeBlock> last_code_block(std::string_view answer) {
  std::optional<CodeBlock> last;
  std::optional<Fence> open;
  CodeBlock current;
  size_t at = 0;
  while (at < answer.size()) {
    const size_t newline = answer.find('\n', at);
    const size_t end = newline == std::string_view::npos ? answer.size() : newline;
    const std::string_view line = answer.substr(at, end - at);
    at = end + 1;
    const auto fence = fence_of(line);
    if (!open) {
      if (!fence) continue;
      open = fence;
      const std::string_view info = trim(fence->info);
      current = CodeBlock{std::string(info.substr(0, info.find_first_of(" \t{"))), {}};
      continue;
    }
    if (fence && fence->mark == open->mark && fence->length >= open->length && trim(fence->info).empty()) {
      last = std::move(current);
      open.reset();
      continue;
    }
    current.code.append(line);
    if (!current.code.empty() && current.code.back() == '\r') current.code.pop_back();
    current.code.push_back('\n');
  }
  if (open)
    return make_error(Errc::parse_error,
                      "the answer's last code block is never closed (was the answer cut short by max_tokens?)");
  if (!last)
    return make_error(Errc::parse_error,
                      "the answer has no fenced code block (the candidate must be the last block, "
                      "between ``` lines)");
  return std::move(*last);
}

}  // namespace drk::generator
