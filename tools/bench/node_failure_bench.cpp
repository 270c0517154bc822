#include "tools/bench/node_failure_bench.h"
#include "messages/envelope.capnp.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <map>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "runtime/nodes/curve_keys.h"
#include "runtime/transport/envelope_frame.h"
#include "runtime/nodes/node_registry.h"
#include "runtime/topology/topology.h"
#include "runtime/nodes/zap_authenticator.h"
#include "tools/bench/free_port.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kWithin = 10s;
constexpr int kHeartbeatsBeforeSilence = 3;
constexpr std::size_t kMaxWelcomeBytes = 1u << 20;

// When the registry reported the node lost, shared with the measuring thread.
struct LostAt {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<Clock::time_point> at;
};

std::string topology_text(uint16_t port) {
  return "name: bench-nodes\n"
         "run_dir: /tmp\n"
         "network: {listen: 'tcp://127.0.0.1:" +
         std::to_string(port) +
         "'}\n"
         "nodes: [b]\n"
         "actors:\n"
         "  - {name: far, role: far, process: far, node: b}\n";
}

zmq::message_t heartbeat(uint64_t sequence) {
  return runtime::envelope_frame([&](msg::Envelope::Builder envelope) {
    envelope.setSender("b");
    auto beat = envelope.getBody().initNodeHeartbeat();
    beat.setNode("b");
    beat.setIncarnation(1);
    beat.setSequence(sequence);
  });
}

Result<double> one_detection_ms() {
  auto port = free_tcp_ports(1);
  if (!port) return port.error();
  auto topology = runtime::parse_topology(YAML::Load(topology_text(*port)), "the node failure benchmark");
  if (!topology) return topology.error();

  auto head_keys = runtime::generate_curve_key_pair();
  if (!head_keys) return head_keys.error();
  auto node_keys = runtime::generate_curve_key_pair();
  if (!node_keys) return node_keys.error();
  const std::map<std::string, std::string> allowed{{"b", node_keys->public_key}};

  zmq::context_t context;
  runtime::ZapAuthenticator authenticator(context, allowed);
  LostAt lost;
  runtime::NodeEvents events;
  events.lost = [&](const std::string&, const std::string&) {
    std::lock_guard lock(lost.mutex);
    lost.at = Clock::now();
    lost.changed.notify_all();
  };
  runtime::NodeRegistryOptions options;
  options.head = runtime::NodeAddress{"127.0.0.1", "127.0.0.1", static_cast<uint16_t>(*port + 1), ""};
  options.topology_yaml = YAML::Dump(topology->resolved);
  options.run_id = 1;
  options.curve = runtime::CurveIdentity{*head_keys, allowed};
  auto registry = runtime::NodeRegistry::start(context, *topology, std::move(options), std::move(events));
  if (!registry) return registry.error();

  Clock::time_point silenced;
  {
    zmq::socket_t node(context, zmq::socket_type::dealer);
    node.set(zmq::sockopt::linger, 0);
    node.set(zmq::sockopt::rcvtimeo, static_cast<int>(std::chrono::milliseconds(kWithin).count()));
    runtime::make_curve_client(node, *node_keys, head_keys->public_key);
    node.connect(topology->network.listen);
    node.send(runtime::envelope_frame([&](msg::Envelope::Builder envelope) {
                envelope.setSender("b");
                auto join = envelope.getBody().initNodeJoin();
                join.setNode("b");
                join.setHost("127.0.0.1");
                join.setBindHost("127.0.0.1");
                join.setPortBase(static_cast<uint16_t>(*port + 2));
                join.setPid(::getpid());
                join.setIncarnation(1);
                join.setPublicKey(node_keys->public_key);
              }),
              zmq::send_flags::none);
    zmq::message_t frame;
    if (!node.recv(frame)) return make_error(Errc::timeout, "the node registry did not welcome node b within 10 s");
    auto welcome = runtime::decode_envelope_frame(std::move(frame), kMaxWelcomeBytes);
    if (!welcome) return welcome.error();
    const auto body = welcome->root<msg::Envelope>().getBody();
    if (!body.isNodeWelcome() || body.getNodeWelcome().getRefused().size() != 0) {
      return make_error(Errc::protocol_error, "the node registry did not welcome node b: " +
                                                  std::string(body.isNodeWelcome()
                                                                  ? body.getNodeWelcome().getRefused().cStr()
                                                                  : "another message came first"));
    }
    const std::chrono::milliseconds period(topology->network.heartbeat_ms);
    for (uint64_t sequence = 1; sequence <= kHeartbeatsBeforeSilence; ++sequence) {
      node.send(heartbeat(sequence), zmq::send_flags::none);
      std::this_thread::sleep_for(period);
    }
    node.send(heartbeat(kHeartbeatsBeforeSilence + 1), zmq::send_flags::none);
    silenced = Clock::now();
  }  // the node's socket closes: it is gone

  std::unique_lock lock(lost.mutex);
  if (!lost.changed.wait_for(lock, kWithin, [&] { return lost.at.has_value(); })) {
    return make_error(Errc::timeout, "the node registry did not report the silent node b lost within 10 s");
  }
  return std::chrono::duration<double, std::milli>(*lost.at - silenced).count();
}

}  // namespace

Result<std::vector<double>> node_failure_detection_ms(int samples) {
  std::vector<double> times_ms;
  for (int sample = 0; sample < samples; ++sample) {
    auto time_ms = one_detection_ms();
    if (!time_ms) return time_ms.error();
    times_ms.push_back(*time_ms);
  }
  return times_ms;
}

}  // namespace drk::bench
