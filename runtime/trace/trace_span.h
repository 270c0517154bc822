// A span: one stretch of work on one track (an actor's thread, an Evaluator's sandbox), as the
// trace recorder keeps it (trace_recorder.h) and writes it to RUN_DIR/trace/ (docs/traces.md).
//
// A handler span is one handler call, named by the message type (a payload's registered name,
// runtime/transport/payload_types.h) or the handler ("on_timer", "on_start", "on_stop"); it
// carries the trace id of the envelope it handled and those of the envelopes it sent, by which
// `drk trace` links the spans of one piece of work (a candidate) into a flow. A work span is
// what an actor records of its own work (an evaluation's phases), with arguments.
// Plain values; no thread-safety of their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace drk::runtime::trace {

struct SpanArg {
  std::string key;
  std::string value;
};

struct Span {
  uint32_t track = 0;      // TraceRecorder::track()
  const char* name = "";   // static storage duration: a literal, or a body_kind() name
  bool handler = false;    // a handler call (else work an actor recorded)
  int64_t start_ns = 0;    // Unix nanoseconds: a handler's span ends where the next of its run
  int64_t duration_ns = 0; // begins, exactly (actor_host.h), so slices on a track nest
  uint64_t trace_id = 0;   // the handled envelope's (handler spans) or the work's; 0: none
  std::vector<uint64_t> sent_trace_ids;  // of the envelopes a handler sent, none repeated
  std::vector<SpanArg> args;
};

// What an actor records of its own work (ActorContext::record_span): on the track `track` of
// its process (created on first use), e.g. "evaluator.0/sandbox".
struct WorkSpan {
  std::string track;
  const char* name = "";  // static storage duration
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point end;
  uint64_t trace_id = 0;
  std::vector<SpanArg> args;
};

}  // namespace drk::runtime::trace
