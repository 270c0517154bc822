// A run's trace files (RUN_DIR/trace/*.jsonl, trace_recorder.h) as one trace in the Trace Event
// format that Perfetto (ui.perfetto.dev) and chrome://tracing open: {"traceEvents": [...],
// "displayTimeUnit": "ms", "otherData": {...}} (docs/traces.md).
//
// One process (pid) per process of the run, its restarts (incarnations) included; one thread
// (tid) per track: an actor, or a track of an actor's work such as "evaluator.0/sandbox"; both
// named by metadata events ("ph": "M"). Each span is a complete event ("ph": "X"; times in
// microseconds, with fractions, from the run's first span, whose Unix time in nanoseconds is
// otherData.origin_unix_ns), its
// args the message type or work's arguments, its trace id and what it sent. Spans that share a
// trace id (they handled an envelope of that trace, sent one, or recorded work for it) become
// one flow ("ph": "s", "t", "f", bound to the enclosing slice, "bp": "e"), in the order they
// began; of two such spans on one track, one inside the other, the inner one stands for both.
// The arguments that the work spans of a trace carry (a candidate's id, its task) are given to
// every span of that trace, so that each handler call names the candidate it served.
//
// Lines that do not parse (the last line of a process that was killed mid-write) are skipped
// and counted. Thread-safety: pure functions. Errors: not_found when RUN_DIR has no trace
// files (the message says how to record them); io_error when one cannot be read.
#pragma once

#include <cstddef>
#include <string>

#include "base/json_text.h"
#include "base/result.h"

namespace drk::runtime::trace {

struct TraceConversion {
  Json trace;
  std::size_t files = 0;
  std::size_t spans = 0;
  std::size_t flows = 0;
  std::size_t skipped_lines = 0;
  uint64_t dropped_spans = 0;  // dropped by recorders whose buffers were full
};

Result<TraceConversion> trace_events_of_run(const std::string& run_dir);

}  // namespace drk::runtime::trace
