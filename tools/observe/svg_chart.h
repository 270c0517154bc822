// svg_line_chart(): a line chart as an inline SVG element, for pages that must stand alone (no
// script, no network): axes with "nice" ticks (1, 2 or 5 times a power of ten), a title, axis
// labels, one line with a dot per point for each series, and a legend under the plot.
//
// Each series is a <g class="series" data-series="LABEL"> holding one <polyline> and a
// <circle class="point"> per point drawn, so that a test or a reader's tool can count them.
// Labels and titles are escaped (html_escape): they may come from untrusted text.
//
// Thread-safety: pure functions. Errors: none; points whose x or y is not finite are left out,
// and a chart without any point draws its frame with `empty_text` in it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace drk::observe {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string label;
  std::vector<ChartPoint> points;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ChartSeries> series;
  int width = 600;
  int plot_height = 260;          // the plot's own height; the legend adds a row per series
  std::optional<double> y_min;    // a fixed range (fractions: 0 to 1); else from the data
  std::optional<double> y_max;
  bool integer_x = true;          // x ticks at whole numbers only (steps)
  std::string empty_text = "no data yet";
};

std::string svg_line_chart(const LineChart& chart);

// Ticks from at or below `low` to at or above `high`, about `wanted` of them, spaced 1, 2 or 5
// times a power of ten (at least `least_step` apart). `low` == `high` is widened around it.
std::vector<double> nice_ticks(double low, double high, int wanted, double least_step = 0);

}  // namespace drk::observe
