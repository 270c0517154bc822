// drk trace RUN_DIR [--out FILE]: the run's trace files (RUN_DIR/trace/, recorded by every
// process of `drk run`) as one Chrome/Perfetto trace (runtime/trace/trace_events.h,
// docs/traces.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "base/json_text.h"
#include "runtime/log.h"
#include "runtime/trace/trace_events.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

struct TraceArgs {
  std::string run_dir;
  std::string out;  // empty: RUN_DIR/trace.json
};

// The time of the work the actors recorded (the Evaluators' steps), per kind, most first: the
// first answer to "where did the time go".
void print_work_totals(const Json& trace) {
  std::map<std::string, std::pair<double, std::size_t>> totals;  // name: microseconds, count
  for (const Json& event : trace["traceEvents"]) {
    if (event["ph"] != "X" || event["cat"] != "work") continue;
    auto& total = totals[event["name"].get<std::string>()];
    total.first += event["dur"].get<double>();
    ++total.second;
  }
  if (totals.empty()) return;
  std::vector<std::pair<std::string, std::pair<double, std::size_t>>> sorted(totals.begin(), totals.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::cout << "recorded work, total time:";
  for (const auto& [name, total] : sorted)
    std::cout << "  " << name << " " << fixed(total.first / 1e6, 2) << " s (" << total.second << ")";
  std::cout << "\n";
}

int write_trace(const TraceArgs& args) {
  auto conversion = runtime::trace::trace_events_of_run(args.run_dir);
  if (!conversion) {
    log::error() << "drk trace: " << conversion.error().message;
    return 1;
  }
  const std::string out = args.out.empty() ? args.run_dir + "/trace.json" : args.out;
  {
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    file << json_text(conversion->trace);
    if (!file.flush()) {
      log::error() << "drk trace: cannot write '" << out << "': check that its directory exists and is writable";
      return 1;
    }
  }
  std::cout << "wrote " << out << ": " << conversion->spans << " spans from " << conversion->files
            << " trace file(s), " << conversion->flows << " flow(s)";
  if (conversion->dropped_spans > 0) std::cout << "; " << conversion->dropped_spans << " span(s) were dropped while recording";
  if (conversion->skipped_lines > 0) std::cout << "; " << conversion->skipped_lines << " unreadable line(s) skipped";
  std::cout << "\n";
  print_work_totals(conversion->trace);
  std::cout << "open it at https://ui.perfetto.dev (Open trace file) or in chrome://tracing (Load)\n";
  return 0;
}

}  // namespace

void add_trace_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* trace = drk.add_subcommand(
      "trace",
      "writes a run's trace for Perfetto or chrome://tracing\n"
      "\n"
      "Merges the trace files every process of `drk run` records in RUN_DIR/trace/ into one trace in\n"
      "the Trace Event format: a track per actor and per Evaluator sandbox, a slice per handler call\n"
      "(named by its message type) and per evaluation step (compile, load, correctness, timing), and\n"
      "flows that follow each candidate from the Generator through the Oracle, the Evaluator and the\n"
      "Verifier to its reward.");
  trace->footer("See docs/traces.md.");
  trace->add_option("RUN_DIR", args->run_dir, "the run directory of `drk run`")->required();
  trace->add_option("--out", args->out, "where to write the trace (default RUN_DIR/trace.json)");
  actions[trace] = [args] { return write_trace(*args); };
}

}  // namespace drk::tools
