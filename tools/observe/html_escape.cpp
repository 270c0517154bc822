#include "tools/observe/html_escape.h"

namespace drk::observe {

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#39;"; break;
      case '\0': escaped += "\xEF\xBF\xBD"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

}  // namespace drk::observe
