#include "tools/observe/svg_chart.h"

#include <cmath>
#include <string>

#include "tests/doctest_drk.h"
#include "tools/observe/html_escape.h"

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t found = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++found;
  return found;
}

// The text of the series group labelled `label` (escaped as the chart writes it).
std::string series_group(const std::string& svg, const std::string& label) {
  const size_t start = svg.find("<g class=\"series\" data-series=\"" + label + "\">");
  if (start == std::string::npos) return "";
  return svg.substr(start, svg.find("</g>", start) - start);
}

}  // namespace

using drk::observe::ChartSeries;
using drk::observe::LineChart;

DRK_TEST_CASE("a chart draws one line with a dot per point for each series") {
  LineChart chart;
  chart.title = "mean reward";
  chart.series = {ChartSeries{"TRLOO", {{1, 0.68}, {2, 0.72}, {3, 0.76}}},
                  ChartSeries{"GRPO", {{1, 0.68}, {2, 0.74}, {3, 0.75}, {4, 0.77}, {5, 0.76}}}};
  const std::string svg = drk::observe::svg_line_chart(chart);
  DRK_CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  DRK_CHECK(count(svg, "<polyline") == 2);
  DRK_CHECK(count(series_group(svg, "TRLOO"), "<circle class=\"point\"") == 3);
  DRK_CHECK(count(series_group(svg, "GRPO"), "<circle class=\"point\"") == 5);
  DRK_CHECK(count(svg, "class=\"legend\"") == 2);
  DRK_CHECK(svg.find("no data yet") == std::string::npos);
}

DRK_TEST_CASE("labels and titles are escaped, and points that are not finite are left out") {
  LineChart chart;
  chart.title = "<script>alert(1)</script>";
  chart.series = {ChartSeries{"a\"b<c>&d", {{1, 1.0}, {2, std::nan("")}, {3, 2.0}}}};
  const std::string svg = drk::observe::svg_line_chart(chart);
  DRK_CHECK(svg.find("<script>") == std::string::npos);
  DRK_CHECK(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  DRK_CHECK(count(series_group(svg, "a&quot;b&lt;c&gt;&amp;d"), "<circle class=\"point\"") == 2);
  DRK_CHECK(svg.find("nan") == std::string::npos);
}

DRK_TEST_CASE("a chart without points draws its frame and says so") {
  LineChart chart;
  chart.empty_text = "no steps recorded yet";
  chart.series = {ChartSeries{"run", {}}};
  const std::string svg = drk::observe::svg_line_chart(chart);
  DRK_CHECK(svg.find("no steps recorded yet") != std::string::npos);
  DRK_CHECK(count(svg, "<circle") == 0);
}

DRK_TEST_CASE("ticks are 1, 2 or 5 times a power of ten and cover the data") {
  const auto ticks = drk::observe::nice_ticks(0.68, 0.77, 5);
  DRK_REQUIRE(ticks.size() >= 2);
  DRK_CHECK(ticks.front() <= 0.68);
  DRK_CHECK(ticks.back() >= 0.77);
  DRK_CHECK(ticks[1] - ticks[0] == doctest::Approx(0.02));
  const auto steps = drk::observe::nice_ticks(1, 1, 6, 1);  // one step: whole numbers around it
  DRK_CHECK(steps.front() == 0);
  DRK_CHECK(steps.back() == 2);
  DRK_CHECK(drk::observe::html_escape(std::string("a\0b", 3)) == "a\xEF\xBF\xBD" "b");
}
