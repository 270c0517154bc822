#include "tools/drk/corpus_report.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>

#include "base/json_text.h"

namespace drk::tools {
namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

}  // namespace

Totals total(const std::vector<Row>& rows) {
  Totals t;
  for (const auto& row : rows) {
    if (row.outcome == "skipped") ++t.skipped;
    else if (row.outcome == "invalid") ++t.invalid;
    else if (row.expected.hacked) {
      ++t.hacked;
      if (row.outcome == "caught") ++t.caught;
    } else {
      ++t.honest;
      if (row.outcome == "false alarm") ++t.false_alarms;
      t.honest_eval_ms += row.eval_ms;
      t.honest_verify_ms += row.verify_ms;
    }
  }
  return t;
}

std::vector<std::pair<std::string, Totals>> totals_by_kind(const std::vector<Row>& rows) {
  std::vector<std::string> kinds;
  for (const auto& row : rows)
    if (std::find(kinds.begin(), kinds.end(), row.kind) == kinds.end()) kinds.push_back(row.kind);
  std::vector<std::pair<std::string, Totals>> by_kind;
  for (const auto& kind : kinds) {
    std::vector<Row> of_kind;
    std::copy_if(rows.begin(), rows.end(), std::back_inserter(of_kind), [&](const Row& row) { return row.kind == kind; });
    by_kind.emplace_back(kind, total(of_kind));
  }
  return by_kind;
}

void print_table(const std::vector<Row>& rows, const Totals& t, bool each_alone,
                 const std::vector<std::string>& differing) {
  std::printf("%-36s %-24s %-34s %-10s %-44s %s\n", "file", "task", "expected", "got", "failed checks", "outcome");
  for (const auto& row : rows) {
    std::string expected = row.expected.problem.empty()
                               ? (row.expected.hacked ? "hacked " : "honest ") + join(row.expected.codes, ",")
                               : "?";
    std::string failed = row.failed.empty() ? "-" : join(row.failed, ",");
    std::printf("%-36s %-24s %-34s %-10s %-44s %s\n", row.file.c_str(), row.expected.task.c_str(), expected.c_str(),
                row.got.c_str(), failed.c_str(), row.outcome.c_str());
    if (!row.note.empty()) std::printf("    note: %s\n", row.note.c_str());
  }
  std::printf("\ncaught %d of %d hacked (detection %.1f %%), %d false alarm(s) among %d honest (%.1f %%), %d skipped",
              t.caught, t.hacked, 100 * t.detection_rate(), t.false_alarms, t.honest, 100 * t.false_positive_rate(),
              t.skipped);
  if (t.invalid) std::printf(", %d without a usable header", t.invalid);
  for (const auto& [kind, k] : totals_by_kind(rows))
    std::printf("\n  %-15s caught %d of %d hacked, %d false alarm(s) among %d honest, %d skipped", kind.c_str(), k.caught,
                k.hacked, k.false_alarms, k.honest, k.skipped);
  std::printf("\nverification of honest files: %.2f ms of %.0f ms evaluation (%.3f %%)\n", t.honest_verify_ms,
              t.honest_eval_ms, 100 * t.overhead());
  if (!each_alone) return;
  std::printf("each file alone: %zu file(s) judged otherwise than in the whole run\n", differing.size());
  for (const auto& line : differing) std::printf("    %s\n", line.c_str());
}

void print_json(const std::string& directory, const std::vector<Row>& rows, const Totals& t, bool each_alone,
                const std::vector<std::string>& differing) {
  Json report = {{"directory", directory},
                          {"detection_rate", t.detection_rate()},
                          {"false_positive_rate", t.false_positive_rate()},
                          {"hacked", t.hacked},
                          {"caught", t.caught},
                          {"honest", t.honest},
                          {"false_alarms", t.false_alarms},
                          {"skipped", t.skipped},
                          {"invalid", t.invalid},
                          {"verification_overhead", t.overhead()}};
  if (each_alone) report["judged_otherwise_alone"] = differing;
  Json& kinds = report["kinds"] = Json::object();
  for (const auto& [kind, k] : totals_by_kind(rows))
    kinds[kind] = {{"hacked", k.hacked}, {"caught", k.caught},   {"honest", k.honest},
                   {"false_alarms", k.false_alarms}, {"skipped", k.skipped}, {"invalid", k.invalid}};
  Json& rows_json = report["rows"] = Json::array();
  for (const Row& row : rows) {
    rows_json.push_back({{"file", row.file},
                         {"kind", row.kind},
                         {"task", row.expected.task},
                         {"expected", row.expected.problem.empty() ? (row.expected.hacked ? "hacked" : "honest") : ""},
                         {"expected_codes", row.expected.codes},
                         {"got", row.got},
                         {"failed_checks", row.failed},
                         {"warnings", row.warnings},
                         {"outcome", row.outcome},
                         {"eval_ms", row.eval_ms},
                         {"verify_ms", row.verify_ms},
                         {"note", row.note}});
  }
  std::cout << json_text(report) << "\n";
}

}  // namespace drk::tools
