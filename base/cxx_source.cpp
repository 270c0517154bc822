#include "base/cxx_source.h"

#include <algorithm>
#include <cctype>

namespace drk {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

CxxSourceViews split_cxx_source(std::string_view source) {
  CxxSourceViews views;
  std::string& code = views.code;
  std::string& literals = views.literals;
  code.assign(source);
  literals.assign(source.size(), ' ');
  for (size_t i = 0; i < source.size(); ++i)
    if (source[i] == '\n') literals[i] = '\n';
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < code.size(); ++k)
      if (code[k] != '\n') code[k] = ' ';
  };
  size_t i = 0;
  bool line_start = true;
  while (i < source.size()) {
    char c = source[i];
    if (line_start) {
      size_t j = i;
      while (j < source.size() && (source[j] == ' ' || source[j] == '\t')) ++j;
      if (j < source.size() && source[j] == '#') {
        size_t k = j + 1;
        while (k < source.size() && (source[k] == ' ' || source[k] == '\t')) ++k;
        if (source.substr(k, 7) == "include") {
          views.includes.push_back(j);
          size_t end = source.find('\n', k);
          if (end == std::string_view::npos) end = source.size();
          blank(j, end);
          i = end;
          continue;
        }
      }
    }
    line_start = c == '\n';
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      size_t end = source.find('\n', i);
      if (end == std::string_view::npos) end = source.size();
      blank(i, end);
      i = end;
    } else if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      size_t end = source.find("*/", i + 2);
      end = end == std::string_view::npos ? source.size() : end + 2;
      blank(i, end);
      i = end;
    } else if (c == 'R' && i + 1 < source.size() && source[i + 1] == '"' && (i == 0 || !is_identifier_char(source[i - 1]) ||
                                                                            source[i - 1] == 'u' || source[i - 1] == 'U' ||
                                                                            source[i - 1] == 'L' || source[i - 1] == '8')) {
      size_t open = source.find('(', i + 2);
      if (open == std::string_view::npos) break;
      std::string closing = ")" + std::string(source.substr(i + 2, open - i - 2)) + "\"";
      size_t end = source.find(closing, open + 1);
      end = end == std::string_view::npos ? source.size() : end;
      for (size_t k = open + 1; k < end; ++k) literals[k] = source[k];
      blank(open + 1, end);
      i = std::min(source.size(), end + closing.size());
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(source[i - 1])) &&
                                           i + 1 < source.size() && std::isxdigit(static_cast<unsigned char>(source[i + 1]))))) {
      // A quote after a hex digit and before one is a digit separator (1'000), not a literal.
      size_t k = i + 1;
      while (k < source.size() && source[k] != c && source[k] != '\n') k += source[k] == '\\' ? 2 : 1;
      size_t end = std::min(k, source.size());
      if (c == '"')
        for (size_t m = i + 1; m < end; ++m) literals[m] = source[m];
      blank(i + 1, end);
      i = end + 1;
    } else {
      ++i;
    }
  }
  return views;
}

}  // namespace drk
