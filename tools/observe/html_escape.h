// html_escape(): text made safe to place in HTML or SVG, in an element's content or a quoted
// attribute. What a run's archive holds (candidate sources, feedback, task names, check codes) is
// a model's output or derived from it, so every piece of it passes through here.
//
// Thread-safety: a pure function. Errors: none; bytes that are not UTF-8 pass unchanged (the
// browser shows U+FFFD), a NUL becomes U+FFFD (HTML parsers drop it otherwise).
#pragma once

#include <string>
#include <string_view>

namespace drk::observe {

// & < > " ' as character references.
std::string html_escape(std::string_view text);

}  // namespace drk::observe
