#include "tools/bench/actor_bench.h"
#include "messages/drk.capnp.h"
#include "runtime/payload.h"

#include <yaml-cpp/yaml.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/actor_host.h"
#include "runtime/transport/borrowed_data.h"
#include "runtime/nodes/curve_keys.h"
#include "runtime/nodes/network_map.h"
#include "runtime/transport/outbox.h"
#include "runtime/topology/topology.h"
#include "runtime/transport/transport.h"
#include "tools/bench/free_port.h"
#include "tools/bench/temp_dir.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kGrace = 10s;  // beyond the budget, before a measurement counts as stuck
constexpr std::size_t kWarmUpRoundTrips = 20;
constexpr uint32_t kSendBatch = 64;  // sends between two reads of the clock

// What the actors hand to the thread that runs the measurement.
struct Report {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::optional<Error> failure;
  Throughput throughput;
  Latency latency;

  void finish(std::optional<Error> error = std::nullopt) {
    std::lock_guard lock(mutex);
    failure = std::move(error);
    done = true;
    changed.notify_all();
  }
  Status wait(std::chrono::milliseconds budget) {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, budget + kGrace, [&] { return done; })) {
      return make_error(Errc::timeout, "the benchmark's actors did not finish within " +
                                           std::to_string((budget + kGrace).count()) + " ms");
    }
    if (failure) return *failure;
    return {};
  }
};

bool is_start(msg::Envelope::Reader envelope) {
  return envelope.getBody().isControl() && envelope.getBody().getControl().isPing();
}

void set_payload(msg::Envelope::Builder envelope, uint32_t sequence, kj::ArrayPtr<const kj::byte> payload) {
  auto weights = runtime::init_payload<msg::PolicyWeights>(envelope);
  weights.setVersion(sequence);
  weights.adoptParameters(runtime::borrowed_data(weights, payload));
}

runtime::SendOptions patient() {
  runtime::SendOptions options;
  options.wait_for_room = std::chrono::duration_cast<std::chrono::milliseconds>(kGrace);
  return options;
}

// Sends payloads to "sink" for the budget once started, then an end marker (a Heartbeat).
class Source final : public runtime::Actor {
 public:
  Source(Report& report, std::size_t payload_bytes, std::chrono::milliseconds duration)
      : report_(report), payload_(payload_bytes, 'x'), duration_(duration) {}

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (!is_start(envelope)) return;
    const auto payload = kj::arrayPtr(reinterpret_cast<const kj::byte*>(payload_.data()), payload_.size());
    const auto until = Clock::now() + duration_;
    // The clock is read once per batch of sends, as raw_throughput's sender reads it.
    for (uint32_t sequence = 1; Clock::now() < until;) {
      for (const uint32_t batch_end = sequence + kSendBatch; sequence < batch_end; ++sequence) {
        auto sent = context.send(
            "sink", [&](msg::Envelope::Builder out) { set_payload(out, sequence, payload); }, patient());
        if (!sent) return report_.finish(sent.error());
      }
    }
    auto ended = context.send(
        "sink", [](msg::Envelope::Builder out) { out.getBody().initHeartbeat(); }, patient());
    if (!ended) report_.finish(ended.error());
  }

 private:
  Report& report_;
  std::vector<char> payload_;
  std::chrono::milliseconds duration_;
};

// Counts payloads from the first (which starts the clock) to the end marker.
class Sink final : public runtime::Actor {
 public:
  explicit Sink(Report& report) : report_(report) {}

  void on_message(runtime::ActorContext&, msg::Envelope::Reader envelope) override {
    const auto body = envelope.getBody();
    // Counted by its type, unread, as a handler that dispatches on it first would.
    if (runtime::payload_type(envelope) == runtime::payload_type_id<msg::PolicyWeights>()) {
      last_ = Clock::now();
      if (started_) {
        ++messages_;
      } else {
        started_ = true;
        first_ = last_;
      }
    } else if (body.isHeartbeat()) {
      report_.throughput.messages = messages_;
      report_.throughput.seconds = std::chrono::duration<double>(last_ - first_).count();
      report_.finish();
    }
  }

 private:
  Report& report_;
  bool started_ = false;
  uint64_t messages_ = 0;
  Clock::time_point first_;
  Clock::time_point last_;
};

// Sends a payload to "pong" and the next one when the answer comes, timing each round trip.
class Ping final : public runtime::Actor {
 public:
  Ping(Report& report, std::size_t payload_bytes, const BenchBudget& budget)
      : report_(report),
        payload_(payload_bytes, 'x'),
        duration_(budget.latency),
        max_trips_(budget.max_round_trips) {}

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (is_start(envelope)) {
      until_ = Clock::now() + duration_;
      return send_next(context);
    }
    if (!runtime::payload_of<msg::PolicyWeights>(envelope)) return;
    const auto answered = Clock::now();
    if (trips_++ >= kWarmUpRoundTrips)
      report_.latency.round_trips_us.push_back(microseconds_between(sent_, answered));
    const std::size_t timed = report_.latency.round_trips_us.size();
    if ((answered >= until_ && trips_ > kWarmUpRoundTrips) || timed >= max_trips_) return report_.finish();
    send_next(context);
  }

 private:
  void send_next(runtime::ActorContext& context) {
    const auto payload = kj::arrayPtr(reinterpret_cast<const kj::byte*>(payload_.data()), payload_.size());
    sent_ = Clock::now();
    auto sent = context.send(
        "pong", [&](msg::Envelope::Builder out) { set_payload(out, static_cast<uint32_t>(trips_), payload); },
        patient());
    if (!sent) report_.finish(sent.error());
  }

  Report& report_;
  std::vector<char> payload_;
  std::chrono::milliseconds duration_;
  std::size_t max_trips_;
  std::size_t trips_ = 0;
  Clock::time_point until_;
  Clock::time_point sent_;
};

// Answers every payload with a copy of it.
class Pong final : public runtime::Actor {
 public:
  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto weights = runtime::payload_of<msg::PolicyWeights>(envelope);
    if (!weights) return;
    (void)context.send(
        envelope.getSender().cStr(),
        [&](msg::Envelope::Builder out) { set_payload(out, weights->getVersion(), weights->getParameters()); },
        patient());
  }
};

// The topology of a pair: `first` in process bench.a on the head node; `second` in bench.a
// (inproc), in bench.b (ipc), or in bench.b on node b (tcp, tcp+curve).
Result<runtime::Topology> pair_topology(BenchTransport transport, const std::string& run_dir,
                                        const std::string& first, const std::string& second) {
  const bool networked = transport == BenchTransport::tcp || transport == BenchTransport::tcp_curve;
  std::string text = "name: bench\nrun_dir: " + run_dir + "\n";
  if (networked) text += "network: {listen: 'tcp://127.0.0.1:1'}\nnodes: [b]\n";
  text += "actors:\n  - {name: " + first + ", role: " + first + ", process: bench.a}\n";
  text += "  - {name: " + second + ", role: " + second + ", process: " +
          (transport == BenchTransport::inproc ? "bench.a" : "bench.b") + (networked ? ", node: b" : "") + "}\n";
  return runtime::parse_topology(YAML::Load(text), "the runtime benchmark's topology");
}

// How each node of a tcp pair is reached, and with tcp_curve who it is and whom it allows.
struct PairNetworks {
  runtime::TransportNetwork head;
  runtime::TransportNetwork b;
};

Result<PairNetworks> pair_networks(BenchTransport transport) {
  PairNetworks networks;
  networks.head.local_node = std::string(runtime::kHeadNode);
  networks.b.local_node = "b";
  if (transport != BenchTransport::tcp && transport != BenchTransport::tcp_curve) return networks;
  // Each node binds a port per mailbox from its base up; the head node's start with the built-in
  // head actor's, so `first` listens at base + 1.
  constexpr int kPortsPerNode = 4;
  auto ports = free_tcp_ports(2 * kPortsPerNode);
  if (!ports) return ports.error();
  runtime::NetworkMap map;
  map.nodes[std::string(runtime::kHeadNode)] = runtime::NodeAddress{"127.0.0.1", "127.0.0.1", *ports, ""};
  map.nodes["b"] = runtime::NodeAddress{"127.0.0.1", "127.0.0.1", static_cast<uint16_t>(*ports + kPortsPerNode), ""};
  if (transport == BenchTransport::tcp_curve) {
    auto head_keys = runtime::generate_curve_key_pair();
    if (!head_keys) return head_keys.error();
    auto b_keys = runtime::generate_curve_key_pair();
    if (!b_keys) return b_keys.error();
    map.nodes[std::string(runtime::kHeadNode)].public_key = head_keys->public_key;
    map.nodes["b"].public_key = b_keys->public_key;
    networks.head.curve = runtime::CurveIdentity{*head_keys, {{"b", b_keys->public_key}}};
    networks.b.curve = runtime::CurveIdentity{*b_keys, {{std::string(runtime::kHeadNode), head_keys->public_key}}};
  }
  networks.head.map = map;
  networks.b.map = map;
  return networks;
}

// Two actors, `first` and `second`, placed as pair_topology says, each process with its own
// Transport, and a driver that starts `first` with a Control.ping.
class ActorPair {
 public:
  ActorPair(BenchTransport transport, std::string first, std::string second, bool traced)
      : transport_(transport),
        dir_(temp_dir("drk-bench")),
        first_(std::move(first)),
        second_(std::move(second)),
        traced_(traced) {}

  ~ActorPair() {
    driver_.reset();
    if (far_host_) far_host_->stop();
    if (near_host_) near_host_->stop();
  }

  Status start(std::unique_ptr<runtime::Actor> first, std::unique_ptr<runtime::Actor> second) {
    auto topology = pair_topology(transport_, dir_.path(), first_, second_);
    if (!topology) return topology.error();
    topology_ = std::move(*topology);
    auto networks = pair_networks(transport_);
    if (!networks) return networks.error();
    runtime::HostOptions options;
    options.run_dir = dir_.path();
    // Each process of the pair records into a file of its own, as a run's processes do.
    const auto traced_as = [&](const std::string& process) -> Result<runtime::HostOptions> {
      if (!traced_) return options;
      auto recorder = runtime::trace::TraceRecorder::open({dir_.path(), process, 1});
      if (!recorder) return recorder.error();
      runtime::HostOptions traced = options;
      traced.trace = std::move(*recorder);
      return traced;
    };
    auto near_options = traced_as("bench.a");
    if (!near_options) return near_options.error();
    near_.emplace(topology_, "bench.a", dir_.path(), networks->head);
    near_host_.emplace(*near_, *near_options);
    if (transport_ != BenchTransport::inproc) {
      auto far_options = traced_as("bench.b");
      if (!far_options) return far_options.error();
      far_.emplace(topology_, "bench.b", dir_.path(), networks->b);
      far_host_.emplace(*far_, *far_options);
    }
    near_host_->add(spec(first_), std::move(first));
    (far_host_ ? *far_host_ : *near_host_).add(spec(second_), std::move(second));
    if (far_host_) {
      if (auto started = far_host_->start(); !started) return started;
    }
    if (auto started = near_host_->start(); !started) return started;
    driver_.emplace(*near_, "driver");
    return driver_->send(first_, [](msg::Envelope::Builder out) { out.getBody().initControl().setPing(); });
  }

 private:
  runtime::ActorSpec spec(const std::string& name) const {
    runtime::ActorSpec spec;
    spec.name = name;
    spec.role = name;
    spec.run_dir = dir_.path();
    return spec;
  }

  BenchTransport transport_;
  TemporaryDirectory dir_;
  std::string first_;
  std::string second_;
  bool traced_;
  runtime::Topology topology_;
  std::optional<runtime::Transport> near_;
  std::optional<runtime::Transport> far_;
  std::optional<runtime::ActorHost> near_host_;
  std::optional<runtime::ActorHost> far_host_;
  std::optional<runtime::Outbox> driver_;
};

}  // namespace

Result<Throughput> actor_throughput(BenchTransport transport, std::size_t payload_bytes,
                                    const BenchBudget& budget, bool traced) {
  Report report;
  {
    ActorPair pair(transport, "source", "sink", traced);
    if (auto started = pair.start(std::make_unique<Source>(report, payload_bytes, budget.throughput),
                                  std::make_unique<Sink>(report));
        !started) {
      return started.error();
    }
    if (auto finished = report.wait(budget.throughput); !finished) return finished.error();
  }
  return report.throughput;
}

Result<Latency> actor_latency(BenchTransport transport, std::size_t payload_bytes,
                              const BenchBudget& budget, bool traced) {
  Report report;
  {
    ActorPair pair(transport, "ping", "pong", traced);
    if (auto started =
            pair.start(std::make_unique<Ping>(report, payload_bytes, budget), std::make_unique<Pong>());
        !started) {
      return started.error();
    }
    if (auto finished = report.wait(budget.latency); !finished) return finished.error();
  }
  return std::move(report.latency);
}

}  // namespace drk::bench
