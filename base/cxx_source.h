// Views of C++ (and CUDA C++) source text for scanners that must not be fooled by comments or
// literals: the Verifier's static checks, the split of a load_inline cuda.cu.
//
// Both views have the source's length and its newlines, so an offset or a line number in a view
// is the same in the source. A lexer, not a parser: raw strings, digit separators and line
// comments are understood; macros are not expanded.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace drk {

struct CxxSourceViews {
  // Comments, the text of #include directives and the contents of string and character literals
  // blanked (spaces); the quotes stay.
  std::string code;
  // Only the contents of string literals; everything else blanked.
  std::string literals;
  // Where each #include directive starts (its '#'), in source order; comments' are not counted.
  std::vector<size_t> includes;
};

CxxSourceViews split_cxx_source(std::string_view source);

// A letter, a digit or '_'.
bool is_identifier_char(char c);

}  // namespace drk
