#include "tools/observe/run_report.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "tools/observe/html_escape.h"
#include "tools/observe/svg_chart.h"

namespace drk::observe {
namespace {

constexpr const char* kStyle = R"css(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1340px; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.number { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.charts svg { border: 1px solid #e5e5e5; }
.missing { background: #fff4e0; border: 1px solid #f0c36d; padding: 8px 12px; margin: 8px 0; font-size: 13px; }
.none { color: #777; font-style: italic; }
pre { background: #f7f7f7; border: 1px solid #e3e3e3; padding: 8px; overflow-x: auto; font-size: 12px;
      max-height: 420px; }
details { margin: 4px 0; } summary { cursor: pointer; font-size: 13px; }
.verified { color: #1a7f37; } .hacked { color: #b42318; }
)css";

std::string number(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string cell(const std::string& escaped, bool numeric = false) {
  return std::string(numeric ? "<td class=\"number\">" : "<td>") + escaped + "</td>";
}

// One chart with a line per run of `value` (nullopt: no point at that step).
std::string chart_of(const std::vector<RunHistory>& runs, const std::string& title, const std::string& y_label,
                     const std::function<std::optional<double>(const StepPoint&)>& value, bool fraction) {
  LineChart chart;
  chart.width = 430;  // three to a row of the page's width (max-width 1340 px)
  chart.title = title;
  chart.x_label = "training step";
  chart.y_label = y_label;
  chart.empty_text = "no step recorded yet";
  if (fraction) chart.y_min = 0, chart.y_max = 1;
  for (const auto& run : runs) {
    ChartSeries series{run.label, {}};
    for (const auto& step : run.steps)
      if (auto y = value(step)) series.points.push_back({static_cast<double>(step.step), *y});
    chart.series.push_back(std::move(series));
  }
  return svg_line_chart(chart);
}

std::string heading_for(const std::vector<RunHistory>& runs, const RunHistory& run) {
  return runs.size() > 1 ? "<h3>" + html_escape(run.label) + "</h3>\n" : "";
}

std::string summary_section(const std::vector<RunHistory>& runs) {
  std::string html = "<section id=\"summary\">\n<h2>Runs</h2>\n<table>\n<tr><th>run</th><th>folder</th><th>steps</th>"
                     "<th>candidates</th><th>screened</th><th>hacks caught</th><th>last mean reward</th>"
                     "<th>best speedup</th><th>tasks with a verified kernel</th><th>hard-coded shapes</th></tr>\n";
  for (const auto& run : runs) {
    double best = 0;
    std::set<std::string> tasks, with_kernel;  // a task judged on two devices has two rows
    for (const auto& task : run.tasks) {
      tasks.insert(task.task);
      if (task.candidate_id.empty()) continue;
      with_kernel.insert(task.task);
      best = std::max(best, task.speedup);
    }
    html += "<tr>" + cell(html_escape(run.label)) + cell("<code>" + html_escape(run.run_dir) + "</code>") +
            cell(std::to_string(run.steps.size()), true) + cell(std::to_string(run.candidates), true) +
            cell(std::to_string(run.screened), true) + cell(std::to_string(run.hacked), true) +
            cell(run.steps.empty() ? "-" : number(run.steps.back().mean_reward, 3), true) +
            cell(with_kernel.empty() ? "-" : number(best, 2) + "x", true) +
            cell(std::to_string(with_kernel.size()) + " of " + std::to_string(tasks.size()), true) +
            cell(run.other_shapes.tried == 0
                     ? "-"
                     : number(100.0 * run.other_shapes.hardcoded / run.other_shapes.tried, 1) + " % of " +
                           std::to_string(run.other_shapes.tried),
                 true) +
            "</tr>\n";
  }
  return html + "</table>\n</section>\n";
}

std::string curves_section(const std::vector<RunHistory>& runs) {
  std::string html = "<section id=\"curves\">\n<h2>Curves</h2>\n<div class=\"charts\">\n";
  html += chart_of(runs, "Mean reward per step", "mean reward",
                   [](const StepPoint& s) -> std::optional<double> { return s.mean_reward; }, false);
  html += chart_of(runs, "Best verified speedup per step", "best speedup (x)",
                   [](const StepPoint& s) -> std::optional<double> { return s.best_speedup; }, false);
  html += chart_of(runs, "Coverage of verified turns", "mean coverage",
                   [](const StepPoint& s) { return s.coverage; }, true);
  for (size_t i = 0; i < kFastP.size(); ++i) {
    const std::string p = number(kFastP[i], 1);
    html += chart_of(runs, "Fast@" + p + " (best so far, share of tasks)", "share of tasks faster than " + p + "x",
                     [i](const StepPoint& s) -> std::optional<double> { return s.fast_p[i]; }, true);
  }
  return html + "</div>\n<p>Coverage: the share of GPU time in the candidate's own kernels, averaged over a step's "
                "measured, verified turns (1 on the CPU). Fast@p: the share of the run's tasks whose best verified "
                "kernel so far is more than p times as fast as the reference.</p>\n</section>\n";
}

std::string verdict_of(const TaskBest& task) {
  std::string text = "<span class=\"verified\">correct";
  if (task.trials > 0) text += " (" + std::to_string(task.trials_passed) + "/" + std::to_string(task.trials) + " trials)";
  text += ", honest</span>";
  if (task.remeasured_speedup)
    text += "; re-measured " + number(*task.remeasured_speedup, 2) + "x (" + std::to_string(task.remeasured_correct) +
            " correct)";
  return text;
}

std::string best_kernels_section(const std::vector<RunHistory>& runs) {
  std::string html = "<section id=\"best-kernels\">\n<h2>Best kernel per task</h2>\n";
  for (const auto& run : runs) {
    html += heading_for(runs, run);
    if (run.tasks.empty()) {
      html += "<p class=\"none\">No candidate recorded.</p>\n";
      continue;
    }
    html += "<table>\n<tr><th>task</th><th>judged on</th><th>best speedup</th><th>kernel us</th><th>reference us</th>"
            "<th>verdict</th><th>step</th><th>candidate</th><th>verified / hacked / all</th></tr>\n";
    std::string sources;
    for (const auto& task : run.tasks) {
      const std::string counts = std::to_string(task.verified) + " / " + std::to_string(task.hacked) + " / " +
                                 std::to_string(task.candidates);
      if (task.candidate_id.empty()) {
        html += "<tr>" + cell(html_escape(task.task)) + "<td colspan=\"7\" class=\"none\">no verified kernel</td>" +
                cell(counts, true) + "</tr>\n";
        continue;
      }
      html += "<tr>" + cell(html_escape(task.task)) + cell(html_escape(task.judged_on)) +
              cell(number(task.speedup, 2) + "x", true) +
              cell(number(task.candidate_us, 1), true) + cell(number(task.reference_us, 1), true) +
              cell(verdict_of(task)) + cell(task.step ? std::to_string(task.step) : "-", true) +
              cell("<code>" + html_escape(task.candidate_id) + "</code>") + cell(counts, true) + "</tr>\n";
      // The first one open, so that a reader sees that the sources are there.
      sources += std::string(sources.empty() ? "<details open>" : "<details>") + "<summary>" + html_escape(task.task) + " (" + html_escape(task.judged_on) + "): " + number(task.speedup, 2) + "x, <code>" +
                 html_escape(task.candidate_id) + "</code></summary>\n<pre><code>" + html_escape(task.source) +
                 "</code></pre></details>\n";
    }
    html += "</table>\n";
    if (!sources.empty()) html += "<h3>Sources</h3>\n" + sources;
  }
  return html + "</section>\n";
}

std::string hacks_section(const std::vector<RunHistory>& runs) {
  std::string html = "<section id=\"hacks\">\n<h2>Hack attempts caught</h2>\n";
  for (const auto& run : runs) {
    html += heading_for(runs, run);
    if (run.caught.empty()) {
      html += "<p class=\"none\">None: the Verifier failed no candidate of this run (" + std::to_string(run.candidates) +
              " candidates).</p>\n";
      continue;
    }
    html += "<p>" + std::to_string(run.hacked) + " of " + std::to_string(run.candidates) +
            " candidates failed a check of the Verifier (docs/verification.md); a candidate that failed several "
            "counts under each.</p>\n<table>\n<tr><th>check</th><th>candidates</th><th>example</th></tr>\n";
    std::string examples;
    for (const auto& caught : run.caught) {
      html += "<tr>" + cell("<code class=\"hacked\">" + html_escape(caught.check) + "</code>") +
              cell(std::to_string(caught.candidates), true) +
              cell(html_escape(caught.example_task) + ": <code>" + html_escape(caught.example_id) + "</code>") +
              "</tr>\n";
      examples += "<details><summary><code>" + html_escape(caught.check) + "</code>: " +
                  html_escape(caught.example_task) + ", <code>" + html_escape(caught.example_id) +
                  "</code></summary>\n<p>Feedback:</p>\n<pre>" + html_escape(caught.example_feedback) +
                  "</pre>\n<p>Source:</p>\n<pre><code>" + html_escape(caught.example_source) + "</code></pre></details>\n";
    }
    html += "</table>\n<h3>Examples</h3>\n" + examples;
  }
  return html + "</section>\n";
}

std::string configuration_section(const std::vector<RunHistory>& runs) {
  std::string html = "<section id=\"configuration\">\n<h2>Configuration</h2>\n";
  for (const auto& run : runs) {
    html += heading_for(runs, run);
    if (run.topology_yaml.empty()) {
      html += "<p class=\"none\">No topology.yaml in this run directory.</p>\n";
      continue;
    }
    html += "<p><code>" + html_escape(run.run_dir) + "/topology.yaml</code> (estimator <code>" +
            html_escape(run.estimator) + "</code>):</p>\n<pre>" + html_escape(run.topology_yaml) + "</pre>\n";
  }
  return html + "</section>\n";
}

}  // namespace

std::string render_run_report(const std::vector<RunHistory>& runs) {
  std::string names;
  for (const auto& run : runs) names += (names.empty() ? "" : ", ") + run.label;
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>drk report: " +
                     html_escape(names) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>drk report: " +
                     html_escape(names) + "</h1>\n";
  for (const auto& run : runs)
    for (const auto& missing : run.missing)
      html += "<div class=\"missing\"><b>" + html_escape(run.label) + ":</b> " + html_escape(missing) + "</div>\n";
  html += summary_section(runs) + curves_section(runs) + best_kernels_section(runs) + hacks_section(runs) +
          configuration_section(runs);
  return html + "</body>\n</html>\n";
}

}  // namespace drk::observe
