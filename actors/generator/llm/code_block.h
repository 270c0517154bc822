// last_code_block(): the candidate in a language model's answer, its last fenced code block
// (CommonMark fences: a line of three or more ` or ~, up to three spaces in, with an optional
// language after it; closed by a line of the same character, at least as many, and nothing else).
// A block left open (an answer cut short by max_tokens) is no candidate: the reason says so.
// Errors: Errc::parse_error with the reason, which the Generator scores as a failed turn and
// tells the model in the next one.
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace drk::generator {

struct CodeBlock {
  std::string language;  // the fence's info string's first word, e.g. "python"; may be empty
  std::string code;      // the lines between the fences, each ending in '\n'
};

Result<CodeBlock> last_code_block(std::string_view answer);

}  // namespace drk::generator
