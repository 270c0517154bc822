#include "tools/observe/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/observe/html_escape.h"

namespace drk::observe {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
                                    "#17becf"};
constexpr int kLeft = 64, kRight = 20, kTop = 34, kBottom = 46, kLegendRow = 18;

std::string number(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// Decimals that show a tick spacing of `step` exactly (0.25 -> 2, 5 -> 0).
int decimals_for(double step) {
  int decimals = 0;
  while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  return decimals;
}

bool finite(const ChartPoint& point) { return std::isfinite(point.x) && std::isfinite(point.y); }

}  // namespace

std::vector<double> nice_ticks(double low, double high, int wanted, double least_step) {
  if (high < low) std::swap(low, high);
  if (high - low < 1e-12) {
    const double pad = std::max(std::fabs(low) * 0.1, least_step > 0 ? least_step : 0.5);
    low -= pad;
    high += pad;
  }
  const double raw = (high - low) / std::max(1, wanted);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power * 10;
  for (double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * power) {
      step = factor * power;
      break;
    }
  }
  step = std::max(step, least_step);
  std::vector<double> ticks;
  const double first = std::floor(low / step + 1e-9) * step;
  for (double tick = first; tick < high + step - 1e-9 * step; tick += step) {
    ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0 : tick);
    if (ticks.size() > 100) break;  // a fault of the arithmetic, never a real axis
  }
  if (ticks.size() < 2) ticks.push_back(first + step);
  return ticks;
}

std::string svg_line_chart(const LineChart& chart) {
  const int legend_height = kLegendRow * static_cast<int>(chart.series.size());
  const int height = kTop + chart.plot_height + kBottom + legend_height;
  const int plot_right = chart.width - kRight;
  const int plot_bottom = kTop + chart.plot_height;

  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
  for (const auto& series : chart.series)
    for (const auto& point : series.points)
      if (finite(point)) {
        x_low = std::min(x_low, point.x);
        x_high = std::max(x_high, point.x);
        y_low = std::min(y_low, point.y);
        y_high = std::max(y_high, point.y);
      }
  const bool empty = !std::isfinite(x_low);
  if (empty) x_low = 0, x_high = 1, y_low = 0, y_high = 1;
  if (chart.y_min) y_low = std::min(y_low, *chart.y_min);
  if (chart.y_max) y_high = std::max(y_high, *chart.y_max);
  const auto x_ticks = nice_ticks(x_low, x_high, 6, chart.integer_x ? 1 : 0);
  const auto y_ticks = nice_ticks(y_low, y_high, 5);
  const double x0 = x_ticks.front(), x1 = x_ticks.back(), y0 = y_ticks.front(), y1 = y_ticks.back();
  auto sx = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * (plot_right - kLeft); };
  auto sy = [&](double y) { return plot_bottom - (y - y0) / (y1 - y0) * (plot_bottom - kTop); };

  const std::string w = std::to_string(chart.width), h = std::to_string(height);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + w + "\" height=\"" + h +
                    "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n";
  svg += "<title>" + html_escape(chart.title) + "</title>\n";
  svg += "<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n";
  svg += "<text x=\"" + std::to_string(chart.width / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" " +
         "font-weight=\"bold\">" + html_escape(chart.title) + "</text>\n";
  const int y_decimals = decimals_for(y_ticks[1] - y_ticks[0]);
  for (double tick : y_ticks) {
    const std::string y = number(sy(tick), 1);
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + y + "\" x2=\"" + std::to_string(plot_right) + "\" y2=\"" +
           y + "\" stroke=\"#e3e3e3\"/>\n";
    svg += "<text x=\"" + std::to_string(kLeft - 6) + "\" y=\"" + number(sy(tick) + 4, 1) + "\" text-anchor=\"end\">" +
           number(tick, y_decimals) + "</text>\n";
  }
  const int x_decimals = decimals_for(x_ticks[1] - x_ticks[0]);
  for (double tick : x_ticks) {
    svg += "<text x=\"" + number(sx(tick), 1) + "\" y=\"" + std::to_string(plot_bottom + 16) +
           "\" text-anchor=\"middle\">" + number(tick, x_decimals) + "</text>\n";
  }
  svg += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(plot_bottom) + "\" x2=\"" +
         std::to_string(plot_right) + "\" y2=\"" + std::to_string(plot_bottom) + "\" stroke=\"black\"/>\n";
  svg += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(kTop) + "\" x2=\"" +
         std::to_string(kLeft) + "\" y2=\"" + std::to_string(plot_bottom) + "\" stroke=\"black\"/>\n";
  svg += "<text x=\"" + std::to_string((kLeft + plot_right) / 2) + "\" y=\"" + std::to_string(plot_bottom + 34) +
         "\" text-anchor=\"middle\">" + html_escape(chart.x_label) + "</text>\n";
  const std::string middle = std::to_string((kTop + plot_bottom) / 2);
  svg += "<text x=\"16\" y=\"" + middle + "\" transform=\"rotate(-90 16 " + middle + ")\" text-anchor=\"middle\">" +
         html_escape(chart.y_label) + "</text>\n";
  if (empty) {
    svg += "<text class=\"empty\" x=\"" + std::to_string((kLeft + plot_right) / 2) + "\" y=\"" + middle +
           "\" text-anchor=\"middle\" fill=\"#777\">" + html_escape(chart.empty_text) + "</text>\n";
  }

  for (size_t index = 0; index < chart.series.size(); ++index) {
    const auto& series = chart.series[index];
    const std::string colour = kColours[index % std::size(kColours)];
    const std::string label = html_escape(series.label);
    svg += "<g class=\"series\" data-series=\"" + label + "\">\n";
    std::string points;
    std::string dots;
    for (const auto& point : series.points) {
      if (!finite(point)) continue;
      const std::string x = number(sx(point.x), 1), y = number(sy(point.y), 1);
      points += (points.empty() ? "" : " ") + x + "," + y;
      dots += "<circle class=\"point\" cx=\"" + x + "\" cy=\"" + y + "\" r=\"3\" fill=\"" + colour + "\"/>\n";
    }
    if (!points.empty())
      svg += "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    svg += dots + "</g>\n";
    const int legend_y = plot_bottom + kBottom + kLegendRow * static_cast<int>(index) + 4;
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(legend_y) + "\" x2=\"" +
           std::to_string(kLeft + 22) + "\" y2=\"" + std::to_string(legend_y) + "\" stroke=\"" + colour +
           "\" stroke-width=\"2\"/>\n";
    svg += "<text class=\"legend\" x=\"" + std::to_string(kLeft + 28) + "\" y=\"" + std::to_string(legend_y + 4) +
           "\">" + label + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace drk::observe
