// Stage lists: the pointwise part of a task as data. A stage is a float C expression of the
// running value `v` ("v > 0.0f ? v : 0.0f"); a list is written pipe-separated
// ("v * 2.0f | v > 0.0f ? v : 0.1f * v"), and `||` inside an expression is not a separator.
// The single stage "v" is the identity (an epilogue of "v" means none).
//
// Expressions are pasted into rendered C++; parse_stages refuses text that could escape an
// expression (statements, blocks, preprocessor lines, comments, string literals).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::schedule {

// The stages in order, trimmed, identities ("v") dropped; an empty list means identity.
// parse_error naming the offending stage when one is empty or holds a forbidden character.
Result<std::vector<std::string>> parse_stages(std::string_view text);

}  // namespace drk::schedule
