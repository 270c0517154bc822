#include "tools/bench/scale_bench.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <ctime>
#include <unordered_map>
#include <zmq.hpp>

#include "actors/oracle/oracle_actor.h"
#include "messages/drk.capnp.h"
#include "runtime/actor_host.h"
#include "runtime/nodes/node_registry.h"
#include "runtime/payload.h"
#include "runtime/supervision/peer_news.h"
#include "runtime/topology/topology.h"
#include "runtime/transport/outbox.h"
#include "runtime/transport/transport.h"
#include "tools/bench/free_port.h"
#include "tools/bench/simulated_nodes.h"
#include "tools/bench/temp_dir.h"
#include "training/domain_messages.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kHeadPorts = 8;  // the listen port, then the head's mailboxes (three)
constexpr auto kJoinWithin = std::chrono::seconds(120);
constexpr auto kDrainWithin = std::chrono::seconds(60);
constexpr auto kFeedEvery = std::chrono::milliseconds(5);
constexpr auto kPausedFeedEvery = std::chrono::milliseconds(100);
constexpr char kFeeder[] = "feeder";

double steady_ms() {
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

// The head process's CPU seconds (user + system) and peak resident memory (KiB).
struct Usage {
  double cpu_s = 0;         // the process's, less the feeder's and the sink's threads
  double oracle_cpu_s = 0;  // the Oracle's thread
  long max_rss_kib = 0;
  double at_ms = 0;
};

Usage usage_now() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& value) { return value.tv_sec + value.tv_usec / 1e6; };
  return Usage{.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime), .max_rss_kib = usage.ru_maxrss, .at_ms = steady_ms()};
}

long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// An actor whose thread's CPU time can be read from any thread (the head's CPU is the
// process's less what stands in for other processes: the feeder, the Archivist's sink).
class MeasuredActor final : public runtime::Actor {
 public:
  explicit MeasuredActor(std::unique_ptr<runtime::Actor> inner) : inner_(std::move(inner)) {}

  // CPU seconds of the actor's thread so far; 0 before it started.
  double cpu_s() const {
    if (!started_.load()) return 0;
    timespec time{};
    if (::clock_gettime(clock_.load(), &time) != 0) return 0;
    return time.tv_sec + time.tv_nsec / 1e9;
  }

  void on_start(runtime::ActorContext& context) override {
    clockid_t clock{};
    if (::pthread_getcpuclockid(::pthread_self(), &clock) == 0) {
      clock_ = clock;
      started_ = true;
    }
    inner_->on_start(context);
  }
  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    inner_->on_message(context, envelope);
  }
  void on_timer(runtime::ActorContext& context, uint64_t token) override { inner_->on_timer(context, token); }
  void on_request_failed(runtime::ActorContext& context, uint64_t correlation_id, const Error& why) override {
    inner_->on_request_failed(context, correlation_id, why);
  }
  void on_stop(runtime::ActorContext& context) override {
    started_ = false;
    inner_->on_stop(context);
  }

 private:
  std::unique_ptr<runtime::Actor> inner_;
  std::atomic<clockid_t> clock_{};
  std::atomic<bool> started_{false};
};

// What the feeder does now; shared between the head's main thread and the feeder's.
enum class Feeding { paused, load, saturate, stopped };

struct FeedState {
  std::atomic<Feeding> feeding{Feeding::paused};
  std::size_t window = 0;  // candidates in flight at most
  std::mutex mutex;
  uint64_t submitted = 0;
  std::unordered_map<std::string, uint32_t> answers;  // candidate id -> Feedback received
  uint64_t duplicate_answers = 0;

  uint64_t outstanding() {
    std::lock_guard lock(mutex);
    return submitted - answers.size();
  }
};

// A Generator for the Oracle: keeps `window` candidates in flight while feeding, counts each
// candidate's Feedback. Ids are "load-N" or "sat-N", by the phase that submitted them.
class CandidateFeeder final : public runtime::Actor {
 public:
  explicit CandidateFeeder(FeedState& state) : state_(state) {}

  void on_start(runtime::ActorContext& context) override { context.start_timer(kFeedEvery, 1); }

  void on_timer(runtime::ActorContext& context, uint64_t) override {
    refill(context);
    const Feeding feeding = state_.feeding.load();
    // Paused, it looks rarely: the idle phase measures the head's heartbeats, not this.
    context.start_timer(feeding == Feeding::load || feeding == Feeding::saturate ? kFeedEvery : kPausedFeedEvery, 1);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto feedback = runtime::payload_of<msg::Feedback>(envelope);
    if (!feedback) return;
    {
      std::lock_guard lock(state_.mutex);
      if (++state_.answers[feedback->getCandidateId().cStr()] > 1) ++state_.duplicate_answers;
    }
    refill(context);
  }

 private:
  void refill(runtime::ActorContext& context) {
    const Feeding feeding = state_.feeding.load();
    if (feeding != Feeding::load && feeding != Feeding::saturate) return;
    while (state_.outstanding() < state_.window) {
      const std::string id = (feeding == Feeding::load ? "load-" : "sat-") + std::to_string(next_++);
      const auto sent = context.send(
          "oracle",
          [&](msg::Envelope::Builder out) {
            auto candidate = runtime::init_payload<msg::Candidate>(out);
            candidate.setId(id);
            candidate.setTrajectoryId(id);
            candidate.setTask("scale_bench");
            candidate.setDevice(msg::Device::CUDA);
            candidate.setSource("// a simulated candidate");
            candidate.setGenerator(kFeeder);
          },
          runtime::SendOptions{.wait_for_room = std::chrono::milliseconds(0)});
      if (!sent) return;  // the Oracle's mailbox is full: the next timer goes on
      std::lock_guard lock(state_.mutex);
      ++state_.submitted;
    }
  }

  FeedState& state_;
  uint64_t next_ = 0;
};

// The Archivist's place: the Oracle's Scored records end here.
class RecordSink final : public runtime::Actor {
 public:
  void on_message(runtime::ActorContext&, msg::Envelope::Reader) override {}
};

std::string node_name(int index) { return "n" + std::to_string(index); }

std::string topology_text(const ScaleBenchOptions& options, int nodes, uint16_t port, const std::string& run_dir) {
  std::ostringstream text;
  text << "name: bench-scale\nrun_dir: '" << run_dir << "'\n"
       << "network: {listen: 'tcp://127.0.0.1:" << port << "', heartbeat_ms: " << options.heartbeat_ms
       << ", node_timeout_ms: " << options.node_timeout_ms << "}\nnodes: [";
  for (int node = 0; node < nodes; ++node) text << (node ? ", " : "") << node_name(node);
  text << "]\nactors:\n"
       << "  - {role: oracle, process: oracle}\n"
       << "  - {name: " << kFeeder << ", role: generator, process: feeder}\n"
       << "  - {role: archivist, process: archivist}\n";
  for (int node = 0; node < nodes; ++node) {
    text << "  - {role: evaluator, count: " << options.gpus_per_node << ", process: own, node: " << node_name(node)
         << "}\n";
  }
  return text.str();
}

// One process of simulated nodes, as the head sees it.
struct NodeProcess {
  pid_t pid = -1;
  int command_fd = -1;
  int report_fd = -1;
  std::vector<std::string> nodes;
};

void tell(std::vector<NodeProcess>& processes, const std::string& line) {
  const std::string text = line + "\n";
  for (auto& process : processes) (void)!::write(process.command_fd, text.data(), text.size());
}

std::string read_all(int fd) {
  std::string text;
  char buffer[65536];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(got));
  return text;
}

// The percentile `fraction` of a histogram of whole milliseconds.
double percentile(const std::map<int64_t, uint64_t>& histogram, double fraction) {
  uint64_t total = 0;
  for (const auto& [ms, count] : histogram) total += count;
  if (total == 0) return -1;
  const auto rank = static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(total)));
  uint64_t seen = 0;
  for (const auto& [ms, count] : histogram) {
    seen += count;
    if (seen >= rank) return static_cast<double>(ms);
  }
  return static_cast<double>(histogram.rbegin()->first);
}

// A number of a merged report; 0 where it has none.
double number(const Json& object, const std::string& key) {
  return object.is_object() && object.contains(key) ? object[key].get<double>() : 0.0;
}

// Losses the registry reported, waiting for the head's main thread (which owns the control Outbox).
struct LossNews {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> pending;
  std::map<std::string, double> lost_at_ms;
};

Json head_process(const ScaleBenchOptions& options, int nodes) {
  Json result{{"nodes", nodes}, {"evaluators", nodes * options.gpus_per_node}};
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);
  result["descriptor_limit"] = static_cast<uint64_t>(files.rlim_cur);

  auto port = free_tcp_ports(kHeadPorts + nodes * options.gpus_per_node);
  if (!port) return result["error"] = port.error().message, result;
  auto run_dir = temp_dir("drk-bench-scale");
  auto topology = runtime::parse_topology(YAML::Load(topology_text(options, nodes, *port, run_dir.path())),
                                          "the scale benchmark's topology");
  if (!topology) return result["error"] = topology.error().message, result;
  runtime::NetworkMap map;
  map.nodes.emplace(std::string(runtime::kHeadNode),
                    runtime::NodeAddress{"127.0.0.1", "127.0.0.1", static_cast<uint16_t>(*port + 1), ""});
  for (int node = 0; node < nodes; ++node) {
    map.nodes.emplace(node_name(node),
                      runtime::NodeAddress{"127.0.0.1", "127.0.0.1",
                                           static_cast<uint16_t>(*port + kHeadPorts + node * options.gpus_per_node), ""});
  }

  // The simulated nodes, forked before this process starts a thread.
  std::vector<NodeProcess> processes;
  for (int first = 0; first < nodes; first += options.nodes_per_process) {
    NodeProcess process;
    for (int node = first; node < std::min(nodes, first + options.nodes_per_process); ++node) {
      process.nodes.push_back(node_name(node));
    }
    int commands[2], reports[2];
    if (::pipe(commands) != 0 || ::pipe(reports) != 0) return result["error"] = "cannot make a pipe", result;
    process.pid = ::fork();
    if (process.pid == 0) {
      // Only its own pipes: a descriptor it kept (the head's result pipe, another process's
      // commands) would keep a reader waiting for an end of file after the head is gone.
      for (int fd = 3; fd < static_cast<int>(files.rlim_cur); ++fd) {
        if (fd != commands[0] && fd != reports[1]) ::close(fd);
      }
      SimulatedNodesPlan plan{&*topology, map, process.nodes, options.fit, options.time_scale,
                              static_cast<uint64_t>(first + 1), commands[0], reports[1]};
      ::_exit(run_simulated_nodes(plan));
    }
    ::close(commands[0]);
    ::close(reports[1]);
    process.command_fd = commands[1];
    process.report_fd = reports[0];
    processes.push_back(std::move(process));
  }

  training::register_domain_messages();
  LossNews news;
  zmq::context_t context;
  runtime::NodeRegistryOptions registry_options;
  registry_options.head = map.nodes.at(std::string(runtime::kHeadNode));
  registry_options.topology_yaml = YAML::Dump(topology->resolved);
  registry_options.run_id = 1;
  runtime::NodeEvents events;
  events.lost = [&](const std::string& node, const std::string&) {
    std::lock_guard lock(news.mutex);
    news.lost_at_ms[node] = steady_ms();
    news.pending.push_back(node);
    news.changed.notify_all();
  };
  const double join_started = steady_ms();
  auto registry = runtime::NodeRegistry::start(context, *topology, std::move(registry_options), std::move(events));
  std::string failure;
  std::optional<runtime::Transport> transport;
  std::optional<runtime::ActorHost> host;
  std::optional<runtime::Outbox> control;
  FeedState feed;
  feed.window = 2 * static_cast<std::size_t>(nodes * options.gpus_per_node);
  std::map<std::string, Usage> marks;
  const MeasuredActor* measured_oracle = nullptr;
  std::vector<const MeasuredActor*> measured_others;
  const auto head_usage = [&] {
    Usage usage = usage_now();
    for (const MeasuredActor* other : measured_others) usage.cpu_s -= other->cpu_s();
    if (measured_oracle) usage.oracle_cpu_s = measured_oracle->cpu_s();
    return usage;
  };
  if (!registry) {
    failure = registry.error().message;
  } else {
    auto joined = (*registry)->wait_for_nodes(
        [&] { return steady_ms() - join_started > 1000.0 * kJoinWithin.count(); });
    if (!joined) failure = "not every simulated node joined within 120 s: " + joined.error().message;
  }
  if (failure.empty()) {
    result["join_s"] = (steady_ms() - join_started) / 1000;
    transport.emplace(*topology, "oracle", run_dir.path(),
                      runtime::TransportNetwork{std::string(runtime::kHeadNode), map, std::nullopt});
    host.emplace(*transport, runtime::HostOptions{.run_dir = run_dir.path()});
    const auto spec_of = [&](const std::string& name) {
      const runtime::ActorEntry* entry = topology->find(name);
      // Not in the topology: parse_topology checks experiment keys against the roles a program
      // registers, and this one registers none. A re-dispatch after a timeout is not measured here.
      return runtime::ActorSpec{name, entry->role, entry->index, {}, YAML::Load("{dispatch_timeout_s: 600}"),
                                run_dir.path(), 1};
    };
    auto oracle_actor = std::make_unique<MeasuredActor>(oracle::make_oracle_actor(spec_of("oracle")));
    auto feeder_actor = std::make_unique<MeasuredActor>(std::make_unique<CandidateFeeder>(feed));
    auto sink_actor = std::make_unique<MeasuredActor>(std::make_unique<RecordSink>());
    measured_oracle = oracle_actor.get();
    measured_others = {feeder_actor.get(), sink_actor.get()};
    host->add(spec_of("oracle"), std::move(oracle_actor));
    host->add(spec_of(kFeeder), std::move(feeder_actor));
    host->add(spec_of("archivist"), std::move(sink_actor));
    if (auto started = host->start(); !started) failure = started.error().message;
    control.emplace(*transport, std::string(runtime::kHeadActor));
  }

  // Waits `seconds`, telling every actor of each lost node's loss as `drk run` does.
  const auto run_for = [&](double seconds) {
    const double until = steady_ms() + 1000 * seconds;
    while (steady_ms() < until) {
      std::unique_lock lock(news.mutex);
      news.changed.wait_for(lock, std::chrono::milliseconds(20), [&] { return !news.pending.empty(); });
      while (!news.pending.empty()) {
        const std::string node = news.pending.front();
        news.pending.pop_front();
        lock.unlock();
        runtime::tell_every_actor(*control, *topology, topology->mailboxes_on(node), runtime::PeerNews::lost, node);
        lock.lock();
      }
    }
  };
  const auto phase = [&](const std::string& name) {
    marks[name] = head_usage();
    tell(processes, "phase " + name);
  };
  std::string killed;
  if (failure.empty()) {
    result["head_rss_joined_kib"] = resident_kib();
    phase("idle");
    run_for(options.idle_s);
    phase("load");
    feed.feeding = Feeding::load;
    run_for(options.load_s / 2);
    if (options.kill_one_node) {
      killed = node_name(nodes / 2);
      tell(processes, "kill " + killed);
    }
    run_for(options.load_s / 2);
    phase("saturate");
    feed.feeding = Feeding::saturate;
    run_for(options.saturate_s);
    phase("drain");
    feed.feeding = Feeding::stopped;
    const double drain_until = steady_ms() + 1000.0 * kDrainWithin.count();
    while (feed.outstanding() > 0 && steady_ms() < drain_until) run_for(0.1);
    marks["end"] = head_usage();
  }

  tell(processes, "end");
  std::map<std::string, Json> phases;
  double killed_at_ms = -1;
  for (auto& process : processes) {
    const std::string text = read_all(process.report_fd);
    ::close(process.report_fd);
    ::close(process.command_fd);
    int status = 0;
    ::waitpid(process.pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
      if (failure.empty()) failure = "a process of simulated nodes failed (its stderr says why)";
      continue;
    }
    const Json report = Json::parse(text, nullptr, false);
    if (report.is_discarded()) continue;
    for (const auto& [name, counts] : report["phases"].items()) {
      Json& merged = phases[name];
      if (!merged.is_object()) merged = Json::object();
      for (const char* key : {"heartbeats_sent", "heartbeats_received", "requests", "redispatched", "answered",
                              "busy_ms", "alive_ms"}) {
        merged[key] = number(merged, key) + counts[key].get<double>();
      }
      for (const auto& bucket : counts["latency_ms"]) {
        merged["latency"][std::to_string(bucket[0].get<int64_t>())] =
            number(merged["latency"], std::to_string(bucket[0].get<int64_t>())) + bucket[1].get<double>();
      }
    }
    if (report["killed"].contains(killed)) killed_at_ms = report["killed"][killed].get<double>();
  }
  if (registry && *registry) (*registry)->shutdown_nodes();
  if (host) host->stop();
  control.reset();
  host.reset();
  transport.reset();
  if (registry && *registry) registry->reset();
  if (!failure.empty()) return result["error"] = failure, result;

  const auto latency = [&](const std::string& name) {
    std::map<int64_t, uint64_t> histogram;
    if (phases[name].contains("latency")) {
      for (const auto& [ms, count] : phases[name]["latency"].items()) {
        histogram[std::stoll(ms)] += static_cast<uint64_t>(count.get<double>());
      }
    }
    return Json{{"p50", percentile(histogram, 0.5)}, {"p90", percentile(histogram, 0.9)},
                {"p99", percentile(histogram, 0.99)}, {"max", percentile(histogram, 1.0)}};
  };
  const auto seconds_of = [&](const std::string& from, const std::string& to) {
    return (marks[to].at_ms - marks[from].at_ms) / 1000;
  };
  const auto cpu_of = [&](const std::string& from, const std::string& to) {
    return (marks[to].cpu_s - marks[from].cpu_s) / seconds_of(from, to);  // cores busy
  };
  const auto oracle_cpu_of = [&](const std::string& from, const std::string& to) {
    return (marks[to].oracle_cpu_s - marks[from].oracle_cpu_s) / seconds_of(from, to);
  };
  const auto busy = [&](const std::string& name) {
    const double alive = number(phases[name], "alive_ms");
    return alive > 0 ? number(phases[name], "busy_ms") / alive : 0.0;
  };
  const double idle_s = seconds_of("idle", "load");
  const double heartbeats = number(phases["idle"], "heartbeats_sent") + number(phases["idle"], "heartbeats_received");
  result["head_rss_kib"] = marks["end"].max_rss_kib;
  result["idle"] = Json{{"heartbeats_per_s", heartbeats / idle_s},
                        {"heartbeats_sent_per_node_s", number(phases["idle"], "heartbeats_sent") / idle_s / nodes},
                        {"head_cpu_cores", cpu_of("idle", "load")},
                        {"head_cpu_us_per_heartbeat", 1e6 * cpu_of("idle", "load") * idle_s / std::max(1.0, heartbeats)}};
  result["load"] = Json{{"evaluations_per_s", number(phases["load"], "answered") / seconds_of("load", "saturate")},
                        {"head_cpu_cores", cpu_of("load", "saturate")},
                        {"oracle_cpu_cores", oracle_cpu_of("load", "saturate")},
                        {"busy_fraction", busy("load")},
                        {"dispatch_latency_ms", latency("load")},
                        {"redispatched", number(phases["load"], "redispatched")}};
  result["saturate"] = Json{{"evaluations_per_s", number(phases["saturate"], "answered") / seconds_of("saturate", "drain")},
                            {"head_cpu_cores", cpu_of("saturate", "drain")},
                            {"oracle_cpu_cores", oracle_cpu_of("saturate", "drain")},
                            {"busy_fraction", busy("saturate")},
                            {"dispatch_latency_ms", latency("saturate")}};
  {
    std::lock_guard lock(news.mutex);
    if (!killed.empty()) {
      result["killed_node"] = killed;
      const auto lost = news.lost_at_ms.find(killed);
      result["loss_detected_ms"] = lost != news.lost_at_ms.end() && killed_at_ms >= 0 ? lost->second - killed_at_ms : -1.0;
    }
    result["nodes_lost"] = news.lost_at_ms.size();
  }
  std::lock_guard lock(feed.mutex);
  result["submitted"] = feed.submitted;
  result["answered"] = feed.answers.size();
  result["duplicate_answers"] = feed.duplicate_answers;
  return result;
}

std::string cell(const Json& value, const char* format) {
  if (value.is_null()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, format, value.get<double>());
  return text;
}

}  // namespace

Json measure_scale(const ScaleBenchOptions& options, int nodes) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return Json{{"nodes", nodes}, {"error", "cannot make a pipe"}};
  std::fflush(nullptr);
  const pid_t head = ::fork();
  if (head == 0) {
    ::close(pipe_fds[0]);
    Json result;
    try {
      result = head_process(options, nodes);
    } catch (const std::exception& error) {
      result = Json{{"nodes", nodes}, {"error", std::string("the head process threw: ") + error.what()}};
    }
    const std::string text = json_text(result);
    for (std::size_t written = 0; written < text.size();) {
      const ssize_t wrote = ::write(pipe_fds[1], text.data() + written, text.size() - written);
      if (wrote <= 0) break;
      written += static_cast<std::size_t>(wrote);
    }
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  const std::string text = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(head, &status, 0);
  const Json result = Json::parse(text, nullptr, false);
  if (result.is_discarded() || !result.is_object()) {
    const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with status " + std::to_string(WEXITSTATUS(status));
    return Json{{"nodes", nodes}, {"error", "the head process " + how + " without a result (its log above says why)"}};
  }
  return result;
}

int run_scale_bench(const ScaleBenchOptions& options, std::ostream& out) {
  std::vector<Json> results;
  bool ok = true;
  for (const int nodes : options.nodes) {
    if (!options.json) out << "drk bench scale: " << nodes << " nodes x " << options.gpus_per_node << " GPUs ..." << std::endl;
    results.push_back(measure_scale(options, nodes));
    Json& result = results.back();
    // What one more node costs, against the size before (the fixed cost of a head cancels).
    if (results.size() > 1) {
      const Json& before = results[results.size() - 2];
      if (before.contains("head_rss_joined_kib") && result.contains("head_rss_joined_kib") &&
          before["nodes"] != result["nodes"]) {
        result["head_rss_marginal_per_node_kib"] =
            (result["head_rss_joined_kib"].get<double>() - before["head_rss_joined_kib"].get<double>()) /
            (result["nodes"].get<double>() - before["nodes"].get<double>());
      }
    }
    ok = ok && !result.contains("error") && result["answered"] == result["submitted"] &&
         result["duplicate_answers"] == 0;
  }
  if (options.json) {
    out << json_text(Json{{"sizes", results}}) << "\n";
    return ok ? 0 : 1;
  }
  const auto at = [](const Json& result, const std::vector<const char*>& path) {
    const Json* value = &result;
    for (const char* key : path) {
      if (!value->is_object() || !value->contains(key)) return Json();
      value = &(*value)[key];
    }
    return *value;
  };
  struct Row {
    std::string label;
    std::vector<const char*> path;
    const char* format;
  };
  const std::vector<Row> rows = {
      {"evaluators", {"evaluators"}, "%.0f"},
      {"join, s", {"join_s"}, "%.2f"},
      {"head RSS once joined, MiB", {"head_rss_joined_kib"}, "%.0f"},
      {"head RSS per added node (joined), KiB", {"head_rss_marginal_per_node_kib"}, "%.1f"},
      {"head peak RSS, MiB", {"head_rss_kib"}, "%.0f"},
      {"idle: heartbeats/s (both ways)", {"idle", "heartbeats_per_s"}, "%.0f"},
      {"idle: head CPU, cores", {"idle", "head_cpu_cores"}, "%.3f"},
      {"idle: head CPU per heartbeat, us", {"idle", "head_cpu_us_per_heartbeat"}, "%.1f"},
      {"load: evaluations/s", {"load", "evaluations_per_s"}, "%.1f"},
      {"load: head CPU, cores", {"load", "head_cpu_cores"}, "%.3f"},
      {"load: Oracle thread CPU, cores", {"load", "oracle_cpu_cores"}, "%.3f"},
      {"load: GPU busy fraction", {"load", "busy_fraction"}, "%.3f"},
      {"load: dispatch p50 ms", {"load", "dispatch_latency_ms", "p50"}, "%.0f"},
      {"load: dispatch p90 ms", {"load", "dispatch_latency_ms", "p90"}, "%.0f"},
      {"load: dispatch p99 ms", {"load", "dispatch_latency_ms", "p99"}, "%.0f"},
      {"lost node detected, ms", {"loss_detected_ms"}, "%.0f"},
      {"its requests re-dispatched", {"load", "redispatched"}, "%.0f"},
      {"ceiling: evaluations/s", {"saturate", "evaluations_per_s"}, "%.0f"},
      {"ceiling: head CPU, cores", {"saturate", "head_cpu_cores"}, "%.3f"},
      {"ceiling: Oracle thread CPU, cores", {"saturate", "oracle_cpu_cores"}, "%.3f"},
      {"ceiling: dispatch p50 ms", {"saturate", "dispatch_latency_ms", "p50"}, "%.0f"},
      {"ceiling: dispatch p99 ms", {"saturate", "dispatch_latency_ms", "p99"}, "%.0f"},
      {"candidates submitted", {"submitted"}, "%.0f"},
      {"answered once", {"answered"}, "%.0f"},
      {"answered twice", {"duplicate_answers"}, "%.0f"}};
  out << "\n| measure |";
  for (const Json& result : results) out << " " << result["nodes"].get<int>() << " nodes |";
  out << "\n|---|";
  for (std::size_t column = 0; column < results.size(); ++column) out << "---|";
  out << "\n";
  for (const Row& row : rows) {
    out << "| " << row.label << " |";
    for (const Json& result : results) {
      Json value = at(result, row.path);
      if (row.label.find("MiB") != std::string::npos && !value.is_null()) value = value.get<double>() / 1024;
      out << " " << (result.contains("error") ? "-" : cell(value, row.format)) << " |";
    }
    out << "\n";
  }
  for (const Json& result : results) {
    if (result.contains("error")) {
      out << "\n" << result["nodes"].get<int>() << " nodes: did not run: " << result["error"].get<std::string>() << "\n";
    }
  }
  out << "\nEvaluation times: lognormal mu " << options.fit.mu << " sigma " << options.fit.sigma
      << " (s, fitted to the H200's measured per-candidate times) x " << options.time_scale
      << "; heartbeat " << options.heartbeat_ms << " ms, node timeout " << options.node_timeout_ms << " ms.\n";
  return ok ? 0 : 1;
}

}  // namespace drk::bench
