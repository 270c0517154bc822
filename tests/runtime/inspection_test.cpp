// Inspection: the statistics an actor host keeps, the head's aggregation, the JSON and table
// forms, and a live run of drk_test_host inspected through its endpoint while a process is
// killed and a handler blocks.
#include <capnp/message.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "runtime/inspection/inspection_board.h"
#include "runtime/inspection/inspection_format.h"
#include "runtime/inspection/inspection_server.h"
#include "runtime/inspection/inspection_stats.h"
#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace drk::runtime {
namespace {

using namespace std::chrono_literals;
using testing::RunDir;
using Clock = std::chrono::steady_clock;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const ActorView* find_actor(const SystemView& system, const std::string& name) {
  for (const auto& actor : system.actors) {
    if (actor.name == name) return &actor;
  }
  return nullptr;
}

const ProcessView* find_process(const SystemView& system, const std::string& name) {
  for (const auto& process : system.processes) {
    if (process.name == name) return &process;
  }
  return nullptr;
}

DRK_TEST_CASE("actor statistics count handlers, their times, the one running now and dead letters") {
  ActorStats stats;
  const auto start = Clock::time_point{} + 1h;
  stats.received();
  stats.begin_handler("heartbeat", start);
  ActorStatsSnapshot during = stats.snapshot(start + 1500ms);
  DRK_CHECK(during.current_handler == "heartbeat");
  DRK_CHECK(during.current_handler_for == 1500ms);
  DRK_CHECK(during.mailbox_depth() == 1);
  stats.end_handler(HandlerKind::message, start + 2s);
  stats.begin_handler("on_timer", start + 3s);
  stats.end_handler(HandlerKind::timer, start + 3s + 1s);
  stats.received();
  stats.dead_letter("a heartbeat from 'x' 5 ms past its deadline");
  static const std::string long_kind(200, 'k');
  stats.begin_handler(long_kind.c_str(), start + 5s);

  const ActorStatsSnapshot after = stats.snapshot(start + 5s);
  DRK_CHECK(after.messages_received == 2);
  DRK_CHECK(after.messages_handled == 1);
  DRK_CHECK(after.timers_fired == 1);
  DRK_CHECK(after.mailbox_depth() == 0);
  DRK_CHECK(after.mean_handler_ms() == doctest::Approx(1500.0));
  DRK_CHECK(after.handler_max == 2s);
  DRK_CHECK(after.current_handler == std::string(kMaxHandlerKind, 'k'));
  DRK_CHECK(after.dead_letters.count == 1);
  DRK_CHECK(after.phase == ActorPhase::starting);
}

DRK_TEST_CASE("the handlers of one frame are timed as one run, and each is counted") {
  ActorStats stats;
  const auto start = Clock::time_point{} + 1h;
  stats.begin_handler("heartbeat", start);
  stats.next_handler(HandlerKind::message, "policyWeights");
  const ActorStatsSnapshot during = stats.snapshot(start + 2ms);
  DRK_CHECK(during.current_handler == "policyWeights");
  DRK_CHECK(during.current_handler_for == 2ms);
  DRK_CHECK(during.messages_handled == 1);
  stats.next_handler(HandlerKind::message, "control");
  stats.end_handler(HandlerKind::message, start + 3ms);
  stats.begin_handler("on_timer", start + 10ms);
  stats.end_handler(HandlerKind::timer, start + 11ms);

  const ActorStatsSnapshot after = stats.snapshot(start + 20ms);
  DRK_CHECK(after.messages_handled == 3);
  DRK_CHECK(after.timers_fired == 1);
  DRK_CHECK(after.handler_calls == 4);
  DRK_CHECK(after.handler_total == 4ms);
  DRK_CHECK(after.handler_max == 3ms);
  DRK_CHECK(after.current_handler.empty());
}

DRK_TEST_CASE("a snapshot taken while the actor's thread records is never torn") {
  ActorStats stats;
  std::atomic<bool> reading{false};
  std::atomic<bool> done{false};
  // Every handler takes exactly 1 ms: a consistent snapshot's total is its count in ms. The actor
  // starts recording once the reader reads, so that on a loaded machine they still overlap.
  std::thread actor([&] {
    while (!reading) std::this_thread::yield();
    auto now = Clock::time_point{} + 1h;
    for (int handled = 0; handled < 200000; ++handled) {
      stats.begin_handler("heartbeat", now);
      now += 1ms;
      stats.end_handler(HandlerKind::message, now);
    }
    done = true;
  });
  uint64_t torn = 0;
  do {
    reading = true;
    const ActorStatsSnapshot snapshot = stats.snapshot();
    if (snapshot.handler_total != std::chrono::milliseconds(snapshot.handler_calls) ||
        snapshot.messages_handled != snapshot.handler_calls) {
      ++torn;
    }
  } while (!done);
  actor.join();
  DRK_CHECK(torn == 0);
  DRK_CHECK(stats.snapshot().handler_calls == 200000);
}

DRK_TEST_CASE("throughput is the rate over the last few seconds and starts over after a restart") {
  ThroughputWindow window(5s);
  const auto start = Clock::time_point{} + 1h;
  DRK_CHECK(window.add(start, 100) == 0);
  DRK_CHECK(window.add(start + 1s, 150) == doctest::Approx(50.0));
  for (int second = 2; second <= 10; ++second) window.add(start + std::chrono::seconds(second), 150 + 10 * (second - 1));
  // Only the last five seconds count: 10 per second, not the 50 of the first.
  DRK_CHECK(window.add(start + 11s, 250) == doctest::Approx(10.0));
  DRK_CHECK(window.add(start + 12s, 3) == 0);
}

Topology two_process_topology() {
  Topology topology;
  topology.name = "t";
  ActorEntry ponger;
  ponger.name = "ponger";
  ponger.role = "ponger";
  ponger.process = "ponger";
  ponger.mailbox_capacity = 50;
  ActorEntry streamer;
  streamer.name = "streamer";
  streamer.role = "streamer";
  streamer.process = "head";
  topology.actors = {streamer, ponger};
  return topology;
}

ProcessView process(const std::string& name, int32_t pid, ProcessStatus status, uint64_t incarnation) {
  ProcessView view;
  view.name = name;
  view.pid = pid;
  view.status = status;
  view.incarnation = incarnation;
  return view;
}

HostView host_report(const std::string& name, uint64_t incarnation, const std::string& actor, uint64_t handled) {
  HostView host;
  host.process = name;
  host.incarnation = incarnation;
  ActorView view;
  view.name = actor;
  view.status = ActorStatus::running;
  view.messages_handled = handled;
  view.current_handler = "heartbeat";
  view.current_handler_seconds = 0.5;
  host.actors.push_back(view);
  return host;
}

DRK_TEST_CASE("the board joins the supervisor's processes with the hosts' reports") {
  int64_t now = 10'000;
  InspectionBoard board(two_process_topology(), "/runs/t", [&] { return now; });
  board.update_processes({process("head", 10, ProcessStatus::running, 1), process("ponger", 11, ProcessStatus::running, 7)});

  SystemView first = board.view();
  DRK_REQUIRE(first.actors.size() == 3);  // the topology's two and the built-in head
  DRK_CHECK(find_actor(first, "ponger")->status == ActorStatus::starting);
  DRK_CHECK(find_actor(first, "ponger")->pid == 11);
  DRK_CHECK(find_actor(first, "ponger")->mailbox_capacity == 50);
  DRK_CHECK(find_actor(first, "head")->process == "head");
  DRK_CHECK(find_process(first, "ponger")->report_age_seconds == -1);

  board.update_host(host_report("ponger", 7, "ponger", 42));
  board.update_host(host_report("stranger", 1, "stranger", 1));  // not in the topology
  now += 500;
  SystemView reported = board.view();
  DRK_CHECK(find_actor(reported, "ponger")->status == ActorStatus::running);
  DRK_CHECK(find_actor(reported, "ponger")->messages_handled == 42);
  DRK_CHECK(find_actor(reported, "ponger")->process == "ponger");
  DRK_CHECK(find_process(reported, "ponger")->report_age_seconds == doctest::Approx(0.5));
  DRK_CHECK(find_actor(reported, "stranger") == nullptr);

  ProcessView died = process("ponger", 0, ProcessStatus::down, 7);
  died.restarts = 0;
  died.recent_causes = {"killed by SIGKILL"};
  board.update_processes({process("head", 10, ProcessStatus::running, 1), died});
  SystemView dead = board.view();
  DRK_CHECK(find_actor(dead, "ponger")->status == ActorStatus::dead);
  DRK_CHECK(find_actor(dead, "ponger")->messages_handled == 42);  // what it had done
  DRK_CHECK(find_actor(dead, "ponger")->current_handler.empty());
  DRK_CHECK(find_process(dead, "ponger")->recent_causes.back() == "killed by SIGKILL");

  ProcessView restarted = process("ponger", 12, ProcessStatus::running, 8);
  restarted.restarts = 1;
  board.update_processes({process("head", 10, ProcessStatus::running, 1), restarted});
  SystemView again = board.view();
  DRK_CHECK(find_actor(again, "ponger")->status == ActorStatus::starting);  // the old report is stale
  DRK_CHECK(find_actor(again, "ponger")->messages_handled == 0);
  DRK_CHECK(find_process(again, "ponger")->restarts == 1);
  DRK_CHECK(again.training.empty());
  board.update_training("step 2/8  policy v2  mean reward 0.500  DIAGNOSTIC");
  DRK_CHECK(board.view().training == "step 2/8  policy v2  mean reward 0.500  DIAGNOSTIC");
}

SystemView sample_view() {
  SystemView system;
  system.topology = "t";
  system.run_dir = "/runs/t";
  system.taken_unix_ms = 1'700'000'000'000;
  system.training = "step 4/8  policy v5  mean reward 0.700  ROLLBACK to v2  DIAGNOSTIC";
  ProcessView ponger = process("ponger", 11, ProcessStatus::running, 7);
  ponger.restarts = 2;
  ponger.recent_causes = {"killed by SIGKILL", "exited with code 70: actor ponger: \"bad\"\n\xff"};
  ponger.report_age_seconds = 0.25;
  system.processes = {process("head", 10, ProcessStatus::running, 1), ponger};
  ActorView evaluator;
  evaluator.name = "evaluator.0";
  evaluator.role = "evaluator";
  evaluator.process = "ponger";
  evaluator.pid = 11;
  evaluator.status = ActorStatus::running;
  evaluator.messages_handled = 17;
  evaluator.mailbox_capacity = 1000;
  evaluator.current_handler = "evalRequest";
  evaluator.current_handler_seconds = 12.34;
  evaluator.dead_letters = 3;
  evaluator.recent_dead_letters = {"a candidate from 'oracle' 12 ms past its deadline"};
  evaluator.messages_per_second = 2.5;
  ActorView head;
  head.name = "head";
  head.role = "head";
  head.process = "head";
  head.pid = 10;
  head.status = ActorStatus::dead;
  system.actors = {evaluator, head};
  return system;
}

DRK_TEST_CASE("the JSON form has every field, escapes what peers sent and marks hung handlers") {
  const std::string json = format_json(sample_view(), 10.0);
  DRK_CHECK_MESSAGE(nlohmann::json::accept(json), json);  // a byte that is not UTF-8 became U+FFFD
  DRK_CHECK_MESSAGE(contains(json, R"("topology":"t","run_dir":"/runs/t","taken_unix_ms":1700000000000,)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"({"name":"ponger","pid":11,"status":"running","incarnation":7,"restarts":2,)"),
                    json);
  DRK_CHECK_MESSAGE(contains(json, R"("recent_causes":["killed by SIGKILL","exited with code 70: actor ponger: \"bad\"\n)" "\xef\xbf\xbd" R"("])"),
                    json);
  DRK_CHECK_MESSAGE(contains(json, R"("report_age_s":0.25)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("report_age_s":null)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("status":"running","restarts":2,"last_cause":"exited with code 70: actor ponger: \"bad\"\n)" "\xef\xbf\xbd" R"(",)"),
                    json);
  DRK_CHECK_MESSAGE(contains(json, R"("status":"dead","restarts":0,"last_cause":null,)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("messages_handled":17,)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("messages_per_s":2.5,)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("mailbox_depth":0,"mailbox_capacity":1000,)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("current_handler":{"kind":"evalRequest","seconds":12.34},"hung":true,)"), json);
  DRK_CHECK_MESSAGE(contains(json, R"("current_handler":null,"hung":false,)"), json);
  DRK_CHECK_MESSAGE(
      contains(json, R"("dead_letters":{"count":3,"recent":["a candidate from 'oracle' 12 ms past its deadline"]}})"),
      json);
  DRK_CHECK_FALSE(contains(format_json(sample_view(), 20.0), R"("hung":true)"));
  DRK_CHECK_MESSAGE(contains(json, R"("training":"step 4/8  policy v5  mean reward 0.700  ROLLBACK to v2  DIAGNOSTIC",)"),
                    json);
}

DRK_TEST_CASE("the table shows busy and hung handlers, restarts and the latest dead letters") {
  const std::string table = format_table(sample_view(), 10.0);
  DRK_CHECK_MESSAGE(contains(table, "HUNG 12.3 s in evalRequest"), table);
  DRK_CHECK_MESSAGE(contains(table, "evaluator.0 (3): a candidate from 'oracle' 12 ms past its deadline"), table);
  DRK_CHECK_MESSAGE(contains(table, "0/1000"), table);
  DRK_CHECK_MESSAGE(contains(table, "0.2 s ago"), table);
  DRK_CHECK(contains(format_table(sample_view(), 60.0), "busy 12.3 s in evalRequest"));
  DRK_CHECK(actor_state(sample_view().actors[1], 10.0) == "dead");
  // The Learner's newest step, rollback and diagnostic mode included; a run before its first step.
  DRK_CHECK_MESSAGE(contains(table, "training: step 4/8  policy v5  mean reward 0.700  ROLLBACK to v2  DIAGNOSTIC"),
                    table);
  SystemView untrained = sample_view();
  untrained.training.clear();
  DRK_CHECK(contains(format_table(untrained, 10.0), "no training step yet"));
}

DRK_TEST_CASE("a system report survives its Cap'n Proto form") {
  capnp::MallocMessageBuilder builder;
  const SystemView sent = sample_view();
  write_system_report(sent, builder.initRoot<msg::SystemReport>());
  const SystemView read = read_system_report(builder.getRoot<msg::SystemReport>().asReader());
  DRK_CHECK(format_json(read, 10.0) == format_json(sent, 10.0));
}

// --- a live run ---------------------------------------------------------------------------

// Asks until `accept` holds or `seconds` pass; returns the last answer (empty when none came).
SystemView fetch_until(InspectionClient& client, const std::function<bool(const SystemView&)>& accept,
                       std::chrono::seconds seconds = 15s) {
  const auto until = Clock::now() + seconds;
  SystemView last;
  while (Clock::now() < until) {
    auto fetched = client.fetch(1s);
    if (fetched) {
      last = std::move(*fetched);
      if (accept(last)) return last;
    }
    std::this_thread::sleep_for(50ms);  // polling a separate process: no event to wait on
  }
  return last;
}

std::string wait_for_endpoint(const RunDir& dir, testing::SpawnedProgram& program) {
  const auto until = Clock::now() + 15s;
  while (Clock::now() < until && program.running()) {
    if (auto endpoint = resolve_inspect_address(dir.file("run"))) return *endpoint;
    std::this_thread::sleep_for(20ms);
  }
  return {};
}

DRK_TEST_CASE("a live run is inspected: counts grow, a killed process shows its restart and cause, a "
              "blocked handler shows its kind and time") {
  RunDir dir;
  const std::string topology = dir.write("inspected.yaml",
                                         "name: inspected\n"
                                         "run_dir: " +
                                             dir.file("run") +
                                             "\n"
                                             "supervision: {backoff_initial_ms: 1000}\n"
                                             "actors:\n"
                                             "  - role: streamer\n"
                                             "    process: head\n"
                                             "    params: {to: ponger, every_ms: 5}\n"
                                             "  - role: ponger\n"
                                             "    process: own\n"
                                             "  - role: sleeper\n"
                                             "    process: own\n"
                                             "    params: {block_ms: 1500}\n"
                                             "experiment: {steps: 1}\n");
  testing::SpawnedProgram program({DRK_TEST_HOST_PATH, "run", topology}, dir.file("output.txt"));
  const std::string endpoint = wait_for_endpoint(dir, program);
  DRK_REQUIRE_MESSAGE(!endpoint.empty(), dir.read("output.txt"));
  DRK_CHECK(contains(endpoint, "ipc://"));
  InspectionClient client(endpoint);

  const auto ponger_handling = [](const SystemView& view) {
    const ActorView* ponger = find_actor(view, "ponger");
    return ponger && ponger->status == ActorStatus::running && ponger->messages_handled > 0;
  };
  const SystemView first = fetch_until(client, ponger_handling);
  DRK_REQUIRE_MESSAGE(ponger_handling(first), format_table(first, 10.0) << dir.read("output.txt"));
  for (const char* name : {"streamer", "ponger", "sleeper", "head"}) {
    const ActorView* actor = find_actor(first, name);
    DRK_REQUIRE_MESSAGE(actor != nullptr, name);
    DRK_CHECK_MESSAGE(actor->pid > 0, name);
  }
  DRK_CHECK(find_actor(first, "streamer")->process == "head");
  DRK_CHECK(find_actor(first, "streamer")->pid == program.pid());
  DRK_CHECK(find_actor(first, "ponger")->pid == find_process(first, "ponger")->pid);
  DRK_CHECK(find_actor(first, "ponger")->pid != program.pid());

  const uint64_t handled_before = find_actor(first, "ponger")->messages_handled;
  const SystemView later = fetch_until(client, [&](const SystemView& view) {
    const ActorView* ponger = find_actor(view, "ponger");
    return ponger && ponger->messages_handled > handled_before && ponger->messages_per_second > 0;
  });
  DRK_CHECK_MESSAGE(find_actor(later, "ponger")->messages_handled > handled_before, format_table(later, 10.0));
  DRK_CHECK_MESSAGE(find_actor(later, "ponger")->messages_per_second > 0, format_table(later, 10.0));
  DRK_CHECK(find_actor(later, "streamer")->timers_fired > 0);

  const SystemView blocked = fetch_until(client, [](const SystemView& view) {
    const ActorView* sleeper = find_actor(view, "sleeper");
    return sleeper && sleeper->current_handler == "heartbeat" && sleeper->current_handler_seconds >= 0.3;
  });
  const ActorView* sleeper = find_actor(blocked, "sleeper");
  DRK_REQUIRE(sleeper != nullptr);
  DRK_CHECK_MESSAGE(sleeper->current_handler == "heartbeat", format_table(blocked, 10.0));
  DRK_CHECK(is_hung(*sleeper, 0.3));
  DRK_CHECK_MESSAGE(contains(format_table(blocked, 0.3), "HUNG "), format_table(blocked, 0.3));
  DRK_CHECK(contains(format_json(blocked, 0.3), R"("current_handler":{"kind":"heartbeat",)"));

  const int32_t killed_pid = find_process(later, "ponger")->pid;
  DRK_REQUIRE(killed_pid > 0);
  DRK_REQUIRE(::kill(killed_pid, SIGKILL) == 0);
  const SystemView dead = fetch_until(client, [](const SystemView& view) {
    return find_actor(view, "ponger") && find_actor(view, "ponger")->status == ActorStatus::dead;
  });
  DRK_CHECK_MESSAGE(find_actor(dead, "ponger")->status == ActorStatus::dead, format_table(dead, 10.0));
  const SystemView restarted = fetch_until(client, [&](const SystemView& view) {
    const ProcessView* ponger = find_process(view, "ponger");
    return ponger && ponger->restarts == 1 && ponger->pid != killed_pid && ponger_handling(view);
  });
  const ProcessView* ponger = find_process(restarted, "ponger");
  DRK_REQUIRE(ponger != nullptr);
  DRK_CHECK_MESSAGE(ponger->restarts == 1, format_table(restarted, 10.0));
  DRK_CHECK(ponger->status == ProcessStatus::running);
  DRK_REQUIRE(!ponger->recent_causes.empty());
  DRK_CHECK(ponger->recent_causes.back() == "killed by SIGKILL");
  DRK_CHECK(find_process(restarted, "sleeper")->restarts == 0);

  DRK_REQUIRE(::kill(program.pid(), SIGTERM) == 0);
  DRK_REQUIRE_MESSAGE(program.wait_for(15000), dir.read("output.txt"));
  DRK_CHECK(program.exit_code() == 143);
  DRK_CHECK_FALSE(std::filesystem::exists(inspect_endpoint_file(dir.file("run"))));
  const auto after = client.fetch(300ms);
  DRK_REQUIRE_FALSE(after.ok());
  DRK_CHECK(after.error().code == Errc::peer_unavailable);
  DRK_CHECK(resolve_inspect_address(dir.file("run")).error().code == Errc::not_found);
}

}  // namespace
}  // namespace drk::runtime
