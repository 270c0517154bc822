#include "runtime/trace/trace_events.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "runtime/trace/trace_recorder.h"

namespace drk::runtime::trace {
namespace {

namespace fs = std::filesystem;

struct ReadSpan {
  std::string process;
  std::string track;
  std::string name;
  bool handler = false;
  int64_t ts = 0;
  int64_t dur = 0;
  std::string trace;              // 16 hex digits; empty: none
  std::vector<std::string> sent;  // trace ids
  Json args = Json::object();
};

struct ReadFiles {
  std::vector<ReadSpan> spans;
  std::size_t files = 0;
  std::size_t skipped_lines = 0;
  uint64_t dropped = 0;
};

std::string string_or(const nlohmann::json& object, const char* key, const std::string& fallback = "") {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : fallback;
}

Status read_file(const fs::path& path, ReadFiles& into) {
  std::ifstream in(path);
  if (!in) return make_error(Errc::io_error, "cannot read the trace file '" + path.string() + "'");
  ++into.files;
  // The file's name (PROCESS.INCARNATION.jsonl) names the process when its header line is lost.
  std::string process = path.stem().stem().string();
  bool first = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      ++into.skipped_lines;
      continue;
    }
    if (first && parsed.contains("process")) {
      process = string_or(parsed, "process", process);
      first = false;
      continue;
    }
    first = false;
    if (const auto dropped = parsed.find("dropped"); dropped != parsed.end() && dropped->is_number_unsigned()) {
      into.dropped += dropped->get<uint64_t>();
      continue;
    }
    const auto ts = parsed.find("ts_ns");
    const auto dur = parsed.find("dur_ns");
    if (ts == parsed.end() || !ts->is_number_integer() || dur == parsed.end() || !dur->is_number_integer() ||
        !parsed.contains("track") || !parsed.contains("name")) {
      ++into.skipped_lines;
      continue;
    }
    ReadSpan span;
    span.process = process;
    span.track = string_or(parsed, "track", "unknown");
    span.name = string_or(parsed, "name", "unknown");
    span.handler = string_or(parsed, "kind") == "handler";
    span.ts = ts->get<int64_t>();
    span.dur = std::max<int64_t>(dur->get<int64_t>(), 0);
    span.trace = string_or(parsed, "trace");
    if (const auto sent = parsed.find("sent"); sent != parsed.end() && sent->is_array()) {
      for (const auto& id : *sent)
        if (id.is_string()) span.sent.push_back(id.get<std::string>());
    }
    if (const auto args = parsed.find("args"); args != parsed.end() && args->is_object()) {
      for (const auto& [key, value] : args->items()) span.args[key] = value;
    }
    into.spans.push_back(std::move(span));
  }
  return {};
}

// Every trace id a span belongs to: the one it handled or worked for, and those it sent.
std::vector<std::string> traces_of(const ReadSpan& span) {
  std::vector<std::string> traces = span.sent;
  if (!span.trace.empty() && std::find(traces.begin(), traces.end(), span.trace) == traces.end())
    traces.push_back(span.trace);
  return traces;
}

// The format's times are microseconds; ours nanoseconds, kept as fractions.
double microseconds(int64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1000.0; }

Json metadata(const char* name, int pid, std::optional<int> tid, const std::string& value) {
  Json event = Json::object();
  event["name"] = name;
  event["ph"] = "M";
  event["pid"] = pid;
  if (tid) event["tid"] = *tid;
  event["args"] = Json{{"name", value}};
  return event;
}

}  // namespace

Result<TraceConversion> trace_events_of_run(const std::string& run_dir) {
  const fs::path dir = trace_dir(run_dir);
  const std::string how =
      "`drk run` records them unless the topology says `supervision: {trace: false}`; run it again with traces on "
      "(the default; --set supervision.trace=true)";
  std::error_code error;
  if (!fs::is_directory(run_dir, error))
    return make_error(Errc::not_found, "'" + run_dir + "' is not a run directory (expected RUN_DIR of `drk run`)");
  std::vector<fs::path> files;
  if (fs::is_directory(dir, error)) {
    for (const auto& entry : fs::directory_iterator(dir, error))
      if (entry.is_regular_file() && entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  if (files.empty())
    return make_error(Errc::not_found, "'" + run_dir + "' has no trace files (" + dir.string() + "/*.jsonl): " + how);
  std::sort(files.begin(), files.end());
  ReadFiles read;
  for (const fs::path& file : files)
    if (auto status = read_file(file, read); !status) return status.error();

  TraceConversion conversion;
  conversion.files = read.files;
  conversion.spans = read.spans.size();
  conversion.skipped_lines = read.skipped_lines;
  conversion.dropped_spans = read.dropped;

  // pids by process name (the head first), tids by track within a process.
  std::set<std::string> process_names;
  for (const ReadSpan& span : read.spans) process_names.insert(span.process);
  std::map<std::string, int> pids;
  if (process_names.count("head")) pids["head"] = 1;
  for (const std::string& name : process_names)
    if (!pids.count(name)) pids[name] = static_cast<int>(pids.size()) + 1;
  std::map<std::pair<std::string, std::string>, int> tids;
  {
    std::set<std::pair<std::string, std::string>> tracks;
    for (const ReadSpan& span : read.spans) tracks.insert({span.process, span.track});
    std::map<std::string, int> next;
    for (const auto& track : tracks) tids[track] = ++next[track.first];
  }
  int64_t origin = 0;
  if (!read.spans.empty()) {
    origin = std::min_element(read.spans.begin(), read.spans.end(),
                              [](const ReadSpan& a, const ReadSpan& b) { return a.ts < b.ts; })
                 ->ts;
  }

  // The arguments of each trace's work spans, for every span of the trace.
  std::map<std::string, Json> trace_args;
  for (const ReadSpan& span : read.spans) {
    if (span.handler || span.trace.empty()) continue;
    Json& args = trace_args.try_emplace(span.trace, Json::object()).first->second;
    for (const auto& [key, value] : span.args.items())
      if (!args.contains(key)) args[key] = value;
  }
  auto label_of = [&](const std::string& trace) {
    const auto found = trace_args.find(trace);
    if (found != trace_args.end() && found->second.contains("candidate") && found->second["candidate"].is_string())
      return found->second["candidate"].get<std::string>();
    return trace;
  };

  Json events = Json::array();
  for (const auto& [name, pid] : pids) {
    events.push_back(metadata("process_name", pid, std::nullopt, name));
  }
  for (const auto& [track, tid] : tids) {
    events.push_back(metadata("thread_name", pids[track.first], tid, track.second));
  }
  for (const ReadSpan& span : read.spans) {
    Json event = Json::object();
    event["name"] = span.name;
    event["cat"] = span.handler ? "handler" : "work";
    event["ph"] = "X";
    event["ts"] = microseconds(span.ts - origin);
    event["dur"] = microseconds(span.dur);
    event["pid"] = pids[span.process];
    event["tid"] = tids[{span.process, span.track}];
    Json args = span.args;
    if (span.handler) args["message"] = span.name;
    if (!span.trace.empty()) {
      args["trace"] = span.trace;
      if (const auto found = trace_args.find(span.trace); found != trace_args.end())
        for (const auto& [key, value] : found->second.items())
          if (!args.contains(key)) args[key] = value;
    }
    if (!span.sent.empty()) {
      Json sent = Json::array();
      for (const std::string& trace : span.sent) sent.push_back(label_of(trace));
      args["sent"] = std::move(sent);
    }
    event["args"] = std::move(args);
    events.push_back(std::move(event));
  }

  // Flows: the spans of each trace in the order they began, the inner of two nested ones on a
  // track standing for both.
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t index = 0; index < read.spans.size(); ++index)
    for (const std::string& trace : traces_of(read.spans[index])) members[trace].push_back(index);
  int flow_id = 0;
  for (auto& [trace, indices] : members) {
    auto encloses = [&](std::size_t outer, std::size_t inner) {
      const ReadSpan& a = read.spans[outer];
      const ReadSpan& b = read.spans[inner];
      return outer != inner && a.process == b.process && a.track == b.track && a.ts <= b.ts &&
             b.ts + b.dur <= a.ts + a.dur && (a.ts != b.ts || a.dur != b.dur || outer < inner);
    };
    std::vector<std::size_t> chain;
    for (const std::size_t candidate : indices) {
      const bool outer = std::any_of(indices.begin(), indices.end(),
                                     [&](std::size_t other) { return encloses(candidate, other); });
      if (!outer) chain.push_back(candidate);
    }
    if (chain.size() < 2) continue;
    std::stable_sort(chain.begin(), chain.end(),
                     [&](std::size_t a, std::size_t b) { return read.spans[a].ts < read.spans[b].ts; });
    ++flow_id;
    for (std::size_t step = 0; step < chain.size(); ++step) {
      const ReadSpan& span = read.spans[chain[step]];
      Json event = Json::object();
      event["name"] = label_of(trace);
      event["cat"] = "flow";
      event["ph"] = step == 0 ? "s" : step + 1 == chain.size() ? "f" : "t";
      event["id"] = flow_id;
      // Inside the slice, so that "enclosing" binds to it.
      event["ts"] = microseconds(span.ts - origin + span.dur / 2);
      event["pid"] = pids[span.process];
      event["tid"] = tids[{span.process, span.track}];
      event["bp"] = "e";
      events.push_back(std::move(event));
    }
  }
  conversion.flows = static_cast<std::size_t>(flow_id);

  Json other = Json::object();
  other["run_dir"] = run_dir;
  other["origin_unix_ns"] = origin;
  other["trace_files"] = conversion.files;
  other["dropped_spans"] = conversion.dropped_spans;
  other["skipped_lines"] = conversion.skipped_lines;
  conversion.trace = Json::object();
  conversion.trace["traceEvents"] = std::move(events);
  conversion.trace["displayTimeUnit"] = "ms";
  conversion.trace["otherData"] = std::move(other);
  return conversion;
}

}  // namespace drk::runtime::trace
