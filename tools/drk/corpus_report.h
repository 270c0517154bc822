// The report of `drk verify-corpus`: the totals of its rows (detection rate, false-positive
// rate, the verification's cost relative to the evaluation), in all and per kind of file (C++,
// CUDA, Python judged by its source, Python evaluated), printed as a table or as one JSON object
// on standard output.
//
// Thread-safety: pure functions, but for the printing on standard output.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tools/drk/corpus_expectation.h"

namespace drk::tools {

// The counts of a corpus run; a skipped file counts in none of the rates.
struct Totals {
  int hacked = 0, caught = 0, honest = 0, false_alarms = 0, skipped = 0, invalid = 0;
  double honest_eval_ms = 0, honest_verify_ms = 0;
  double detection_rate() const { return hacked ? static_cast<double>(caught) / hacked : 1.0; }
  double false_positive_rate() const { return honest ? static_cast<double>(false_alarms) / honest : 0.0; }
  // Verification time (static checks and verdict) relative to the evaluation, honest files only.
  double overhead() const { return honest_eval_ms > 0 ? honest_verify_ms / honest_eval_ms : 0.0; }
  bool perfect() const { return caught == hacked && false_alarms == 0 && invalid == 0; }
};

Totals total(const std::vector<Row>& rows);
// The totals of each kind of row (Row::kind), in the order the kinds first appear.
std::vector<std::pair<std::string, Totals>> totals_by_kind(const std::vector<Row>& rows);

// `differing`: the lines of files_judged_otherwise_alone, printed with `each_alone`.
void print_table(const std::vector<Row>& rows, const Totals& t, bool each_alone,
                 const std::vector<std::string>& differing);
void print_json(const std::string& directory, const std::vector<Row>& rows, const Totals& t, bool each_alone,
                const std::vector<std::string>& differing);

}  // namespace drk::tools
