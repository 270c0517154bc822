// Traces (runtime/trace/): the recorder's buffers, its flushes (periodic and at the end), one
// file per incarnation, full buffers; an actor host's handler spans with their trace ids; and the
// conversion of a run's files into the Trace Event format, flows included.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/actor_host.h"
#include "runtime/topology/topology.h"
#include "runtime/trace/trace_events.h"
#include "runtime/trace/trace_recorder.h"
#include "runtime/transport/transport.h"
#include "tests/doctest_drk.h"
#include "tests/support/pair_topology.h"
#include "tests/support/run_dir.h"

namespace drk::runtime::trace {
namespace {

using namespace std::chrono_literals;
using testing::RunDir;

std::vector<nlohmann::json> lines_of(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// Whether the file `name` of `dir` comes to hold `text` (written by a flusher) within 10 s.
bool comes_to_hold(const RunDir& dir, const std::string& name, const std::string& text) {
  for (int attempt = 0; attempt < 2000; ++attempt) {
    if (dir.read(name).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

Span span_at(uint32_t track, const char* name, int64_t start_ns, uint64_t trace_id = 0) {
  Span span;
  span.track = track;
  span.name = name;
  span.handler = true;
  span.start_ns = start_ns;
  span.duration_ns = 10;
  span.trace_id = trace_id;
  return span;
}

DRK_TEST_CASE("a recorder writes its process's header, then every buffer's spans, to PROCESS.INCARNATION.jsonl") {
  RunDir dir;
  std::string path;
  {
    auto recorder = TraceRecorder::open({dir.path().string(), "oracle", 42, 1h});
    DRK_REQUIRE(recorder.ok());
    path = (*recorder)->path();
    DRK_CHECK(path == dir.file("trace/oracle.42.jsonl"));
    auto first = (*recorder)->buffer();
    auto second = (*recorder)->buffer();
    const uint32_t track = (*recorder)->track("oracle");
    DRK_CHECK((*recorder)->track("oracle") == track);
    Span sent = span_at(track, "candidate", 1000, 0xab);
    sent.sent_trace_ids = {0xcd};
    first->record(std::move(sent));
    Span work = span_at((*recorder)->track("oracle/queue"), "wait", 2000);
    work.handler = false;
    work.args = {{"candidate", "t1/t0 \"quoted\""}};
    second->record(std::move(work));
    (*recorder)->flush();
    const auto lines = lines_of(dir.read("trace/oracle.42.jsonl"));
    DRK_REQUIRE(lines.size() == 3);
    DRK_CHECK(lines[0]["process"] == "oracle");
    DRK_CHECK(lines[0]["incarnation"] == 42);
    DRK_CHECK(lines[1]["name"] == "candidate");
    DRK_CHECK(lines[1]["track"] == "oracle");
    DRK_CHECK(lines[1]["kind"] == "handler");
    DRK_CHECK(lines[1]["ts_ns"] == 1000);
    DRK_CHECK(lines[1]["dur_ns"] == 10);
    DRK_CHECK(lines[1]["trace"] == "00000000000000ab");
    DRK_CHECK(lines[1]["sent"] == nlohmann::json::array({"00000000000000cd"}));
    DRK_CHECK(lines[2]["kind"] == "work");
    DRK_CHECK(lines[2]["track"] == "oracle/queue");
    DRK_CHECK(lines[2]["args"]["candidate"] == "t1/t0 \"quoted\"");
    DRK_CHECK_FALSE(lines[2].contains("trace"));
    // What a writer records after its buffer is released still reaches the file: the recorder's
    // end flushes it.
    first->record(span_at(track, "feedback", 3000));
    first.reset();
  }
  const auto lines = lines_of(dir.read("trace/oracle.42.jsonl"));
  DRK_REQUIRE(lines.size() == 4);
  DRK_CHECK(lines[3]["name"] == "feedback");
}

DRK_TEST_CASE("the flusher writes spans without being asked, so that a crashed process keeps what came before") {
  RunDir dir;
  auto recorder = TraceRecorder::open({dir.path().string(), "learner", 1, 5ms});
  DRK_REQUIRE(recorder.ok());
  auto buffer = (*recorder)->buffer();
  buffer->record(span_at((*recorder)->track("learner"), "trajectory", 5));
  DRK_CHECK(comes_to_hold(dir, "trace/learner.1.jsonl", "trajectory"));
}

DRK_TEST_CASE("a buffer half full is written at once, not at the end of the period") {
  RunDir dir;
  auto recorder = TraceRecorder::open({dir.path().string(), "oracle", 2, 1h, 4});
  DRK_REQUIRE(recorder.ok());
  auto buffer = (*recorder)->buffer();
  const uint32_t track = (*recorder)->track("oracle");
  buffer->record(span_at(track, "candidate", 1));
  buffer->record(span_at(track, "verdict", 2));
  DRK_CHECK(comes_to_hold(dir, "trace/oracle.2.jsonl", "verdict"));
}

DRK_TEST_CASE("a full buffer drops spans and counts them; the file and the conversion say how many") {
  RunDir dir;
  {
    auto recorder = TraceRecorder::open({dir.path().string(), "generator.0", 7, 1h, 2});
    DRK_REQUIRE(recorder.ok());
    auto buffer = (*recorder)->buffer();
    const uint32_t track = (*recorder)->track("generator.0");
    for (int index = 0; index < 5; ++index) buffer->record(span_at(track, "rolloutRequest", 100 * index));
  }
  const auto lines = lines_of(dir.read("trace/generator.0.7.jsonl"));
  DRK_REQUIRE(lines.size() == 4);
  DRK_CHECK(lines[3]["dropped"] == 3);
  auto conversion = trace_events_of_run(dir.path().string());
  DRK_REQUIRE(conversion.ok());
  DRK_CHECK(conversion->spans == 2);
  DRK_CHECK(conversion->dropped_spans == 3);
}

// Two actors of one process: `pinger` sends `pong` a heartbeat under trace id 7 when it starts;
// `pong` records a work span for it.
class Pinger final : public Actor {
 public:
  void on_start(ActorContext& context) override {
    SendOptions traced;
    traced.trace_id = 7;
    (void)context.send("pong", [](msg::Envelope::Builder out) { out.getBody().initHeartbeat(); }, traced);
  }
  void on_message(ActorContext&, msg::Envelope::Reader) override {}
};

struct Handled {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
};

class Pong final : public Actor {
 public:
  explicit Pong(Handled& handled) : handled_(handled) {}
  void on_message(ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto now = std::chrono::steady_clock::now();
    context.record_span({"pong/work", "work", now, now + 3us, envelope.getTraceId(), {{"candidate", "c7"}}});
    std::lock_guard lock(handled_.mutex);
    handled_.done = true;
    handled_.changed.notify_all();
  }

 private:
  Handled& handled_;
};

DRK_TEST_CASE("an actor host records a span per handler call with the trace ids handled and sent, and work spans") {
  RunDir dir;
  const Topology topology = testing::pair_in_one_process("traced", "pinger", "pong");
  {
    Transport transport(topology, "p", dir.path().string());
    auto recorder = TraceRecorder::open({dir.path().string(), "p", 3, 1h});
    DRK_REQUIRE(recorder.ok());
    HostOptions options;
    options.run_dir = dir.path().string();
    options.trace = *recorder;
    Handled handled;
    ActorHost host(transport, options);
    host.add({"pinger", "pinger"}, std::make_unique<Pinger>());
    host.add({"pong", "pong"}, std::make_unique<Pong>(handled));
    recorder->reset();  // the host's options hold it now: its end is the host's
    DRK_REQUIRE(host.start().ok());
    std::unique_lock lock(handled.mutex);
    DRK_REQUIRE(handled.changed.wait_for(lock, 10s, [&] { return handled.done; }));
  }
  std::map<std::string, std::vector<nlohmann::json>> by_track;
  for (const auto& line : lines_of(dir.read("trace/p.3.jsonl")))
    if (line.contains("track")) by_track[line["track"].get<std::string>()].push_back(line);
  auto find = [&](const std::string& track, const std::string& name) {
    for (const auto& line : by_track[track])
      if (line["name"] == name) return line;
    return nlohmann::json();
  };
  const auto started = find("pinger", "on_start");
  DRK_REQUIRE_FALSE(started.is_null());
  DRK_CHECK(started["sent"] == nlohmann::json::array({"0000000000000007"}));
  const auto handled = find("pong", "heartbeat");
  DRK_REQUIRE_FALSE(handled.is_null());
  DRK_CHECK(handled["kind"] == "handler");
  DRK_CHECK(handled["trace"] == "0000000000000007");
  DRK_CHECK(handled["ts_ns"].get<int64_t>() >= started["ts_ns"].get<int64_t>());
  const auto work = find("pong/work", "work");
  DRK_REQUIRE_FALSE(work.is_null());
  DRK_CHECK(work["kind"] == "work");
  DRK_CHECK(work["trace"] == "0000000000000007");
  DRK_CHECK(work["args"]["candidate"] == "c7");
  DRK_CHECK_FALSE(find("pong", "on_stop").is_null());
}

// A run directory's trace files, written as the recorder writes them.
void write_run(const RunDir& dir) {
  dir.write("trace/generator.0.1.jsonl",
            "{\"process\":\"generator.0\",\"incarnation\":1,\"pid\":10}\n"
            "{\"ts_ns\":1000000,\"dur_ns\":50000,\"track\":\"generator.0\",\"name\":\"rolloutRequest\",\"kind\":\"handler\","
            "\"sent\":[\"00000000000000aa\"]}\n");
  dir.write("trace/oracle.1.jsonl",
            "{\"process\":\"oracle\",\"incarnation\":1,\"pid\":11}\n"
            "{\"ts_ns\":1100000,\"dur_ns\":20000,\"track\":\"oracle\",\"name\":\"candidate\",\"kind\":\"handler\","
            "\"trace\":\"00000000000000aa\",\"sent\":[\"00000000000000aa\"]}\n");
  // The Evaluator restarted: a second incarnation's file, whose last line was cut by a kill.
  dir.write("trace/evaluator.0.1.jsonl", "{\"process\":\"evaluator.0\",\"incarnation\":1,\"pid\":12}\n");
  dir.write("trace/evaluator.0.2.jsonl",
            "{\"process\":\"evaluator.0\",\"incarnation\":2,\"pid\":13}\n"
            "{\"ts_ns\":1200000,\"dur_ns\":5000,\"track\":\"evaluator.0\",\"name\":\"evalRequest\",\"kind\":\"handler\","
            "\"trace\":\"00000000000000aa\"}\n"
            "{\"ts_ns\":1210000,\"dur_ns\":500000,\"track\":\"evaluator.0\",\"name\":\"on_timer\",\"kind\":\"handler\","
            "\"sent\":[\"00000000000000aa\"]}\n"
            "{\"ts_ns\":1220000,\"dur_ns\":400000,\"track\":\"evaluator.0\",\"name\":\"evaluate\",\"kind\":\"work\","
            "\"trace\":\"00000000000000aa\",\"args\":{\"candidate\":\"relu/s0/g0/t0\",\"task\":\"relu\"}}\n"
            "{\"ts_ns\":1220000,\"dur_ns\":100000,\"track\":\"evaluator.0/sandbox\",\"name\":\"compile\",\"kind\":\"work\","
            "\"args\":{\"candidate\":\"relu/s0/g0/t0\"}}\n"
            "{\"ts_ns\":1330000,\"dur_ns\":0,\"track\":\"evaluator.0/sandbox\",\"name\":\"load\",\"kind\":\"work\"}\n"
            "{\"ts_ns\":1400000,\"dur_ns\":30000,\"track\":\"evaluator.0\",\"name\":\"evalR");
  dir.write("trace/verifier.1.jsonl",
            "{\"process\":\"verifier\",\"incarnation\":1,\"pid\":14}\n"
            "{\"ts_ns\":1800000,\"dur_ns\":10000,\"track\":\"verifier\",\"name\":\"evalResult\",\"kind\":\"handler\","
            "\"trace\":\"00000000000000aa\",\"sent\":[\"00000000000000aa\"]}\n");
}

DRK_TEST_CASE("a run's trace files become one Trace Event trace: processes, tracks, slices and a candidate's flow") {
  RunDir dir;
  write_run(dir);
  auto conversion = trace_events_of_run(dir.path().string());
  DRK_REQUIRE(conversion.ok());
  DRK_CHECK(conversion->files == 5);
  DRK_CHECK(conversion->spans == 8);
  DRK_CHECK(conversion->skipped_lines == 1);
  DRK_CHECK(conversion->flows == 1);
  const Json& trace = conversion->trace;
  DRK_CHECK(trace["displayTimeUnit"] == "ms");
  DRK_CHECK(trace["otherData"]["origin_unix_ns"] == 1000000);
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::vector<Json> slices;
  std::vector<Json> flow;
  for (const Json& event : trace["traceEvents"]) {
    const std::string phase = event["ph"];
    if (phase == "M" && event["name"] == "process_name") processes[event["pid"]] = event["args"]["name"];
    if (phase == "M" && event["name"] == "thread_name")
      threads[{event["pid"].get<int>(), event["tid"].get<int>()}] = event["args"]["name"];
    if (phase == "X") slices.push_back(event);
    if (phase == "s" || phase == "t" || phase == "f") flow.push_back(event);
  }
  DRK_CHECK(processes.size() == 4);  // both incarnations of evaluator.0 are one process
  DRK_CHECK(threads.size() == 5);    // evaluator.0 and its sandbox, generator.0, oracle, verifier
  for (const Json& slice : slices) {
    DRK_CHECK(slice["dur"].get<double>() >= 0);
    DRK_CHECK(slice["ts"].get<double>() >= 0);
  }
  auto slice_named = [&](const std::string& name) {
    for (const Json& slice : slices)
      if (slice["name"] == name) return slice;
    return Json();
  };
  // A handler of the candidate's trace names the candidate its work span named.
  DRK_CHECK(slice_named("candidate")["args"]["candidate"] == "relu/s0/g0/t0");
  DRK_CHECK(slice_named("candidate")["args"]["message"] == "candidate");
  DRK_CHECK(slice_named("rolloutRequest")["args"]["sent"] == Json::array({"relu/s0/g0/t0"}));
  DRK_CHECK(slice_named("compile")["cat"] == "work");
  // The flow: generator -> oracle -> evaluator (its request, then its evaluate, not the timer
  // around it) -> verifier, in the order they began, each point inside its slice.
  DRK_REQUIRE(flow.size() == 5);
  std::vector<std::string> path;
  for (const Json& point : flow) {
    DRK_CHECK(point["id"] == flow.front()["id"]);
    DRK_CHECK(point["bp"] == "e");
    DRK_CHECK(point["name"] == "relu/s0/g0/t0");
    path.push_back(threads[{point["pid"].get<int>(), point["tid"].get<int>()}]);
  }
  DRK_CHECK(path == std::vector<std::string>{"generator.0", "oracle", "evaluator.0", "evaluator.0", "verifier"});
  DRK_CHECK(flow.front()["ph"] == "s");
  DRK_CHECK(flow[2]["ph"] == "t");
  DRK_CHECK(flow.back()["ph"] == "f");
  DRK_CHECK(flow[3]["ts"].get<double>() == doctest::Approx(220 + 200));  // evaluate's middle, in microseconds
}

DRK_TEST_CASE("a run directory without trace files is refused with how to record them") {
  RunDir dir;
  auto missing = trace_events_of_run(dir.file("nowhere"));
  DRK_REQUIRE_FALSE(missing.ok());
  DRK_CHECK(missing.error().message.find("not a run directory") != std::string::npos);
  auto untraced = trace_events_of_run(dir.path().string());
  DRK_REQUIRE_FALSE(untraced.ok());
  DRK_CHECK(untraced.error().code == Errc::not_found);
  DRK_CHECK(untraced.error().message.find("supervision.trace") != std::string::npos);
}

}  // namespace
}  // namespace drk::runtime::trace
