// The embedded dashboard page is its source files (tools/observe/dashboard/), the stylesheet and
// the script inlined, and asks the network for nothing but the head's own API.
#include "tools/observe/dashboard_page.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

#include "tests/doctest_drk.h"

namespace {

std::string read_file(const std::string& name) {
  std::ifstream in(std::string(DRK_DASHBOARD_DIR) + "/" + name, std::ios::binary);
  DRK_REQUIRE_MESSAGE(in.good(), "cannot read " << name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  const size_t at = text.find(what);
  DRK_REQUIRE_MESSAGE(at != std::string::npos, "index.html lacks " << what);
  return text.replace(at, what.size(), with);
}

}  // namespace

DRK_TEST_CASE("the embedded page is index.html with dashboard.css and dashboard.js inlined, byte for byte") {
  std::string expected = read_file("index.html");
  expected = replaced(expected, "<link rel=\"stylesheet\" href=\"dashboard.css\">",
                      "<style>\n" + read_file("dashboard.css") + "</style>");
  expected = replaced(expected, "<script src=\"dashboard.js\"></script>",
                      "<script>\n" + read_file("dashboard.js") + "</script>");
  const std::string_view page = drk::observe::dashboard_page_html();
  const auto differs = std::mismatch(page.begin(), page.end(), expected.begin(), expected.end()).first;
  const size_t at = static_cast<size_t>(differs - page.begin());
  const bool same = page == expected;  // a bool: doctest would print both pages
  DRK_CHECK_MESSAGE(same, "the embedded page (" << page.size() << " bytes, expected " << expected.size()
                                         << ") differs from byte " << at << ": \"" << page.substr(at, 40)
                                         << "\"; rebuild drk_dashboard_page");
}

DRK_TEST_CASE("the embedded page loads nothing from elsewhere: every src and href is inline data") {
  const std::string page(drk::observe::dashboard_page_html());
  DRK_REQUIRE(page.rfind("<!doctype html>", 0) == 0);
  const std::regex reference(R"((src|href)\s*=\s*["']?([^"'\s>]*))", std::regex::icase);
  size_t references = 0;
  for (auto match = std::sregex_iterator(page.begin(), page.end(), reference); match != std::sregex_iterator(); ++match) {
    ++references;
    DRK_INFO("reference: " << match->str());
    DRK_CHECK(match->str(2).rfind("data:", 0) == 0);
  }
  DRK_CHECK(references == 1);  // the empty icon, which keeps the browser from asking for /favicon.ico
  DRK_CHECK(page.find("@import") == std::string::npos);
  DRK_CHECK(page.find("url(") == std::string::npos);
}
