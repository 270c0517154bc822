#include "runtime/nodes/node_registry.h"

#include <kj/exception.h>
#include <zmq_addon.hpp>

#include <chrono>

#include "runtime/transport/envelope_frame.h"
#include "runtime/log.h"
#include "runtime/supervision/process_signals.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {
namespace {

constexpr std::size_t kMaxNodeMessageBytes = 1u << 20;
constexpr int64_t kMissingNodesLogEveryMs = 5000;

int64_t steady_now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

std::string address_text(const NodeAddress& address) {
  return address.host + ":" + std::to_string(address.port_base);
}

}  // namespace

Result<std::unique_ptr<NodeRegistry>> NodeRegistry::start(zmq::context_t& context, const Topology& topology,
                                                           NodeRegistryOptions options, NodeEvents events) {
  if (!options.steady_ms) options.steady_ms = steady_now_ms;
  zmq::socket_t socket(context, zmq::socket_type::router);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::router_handover, 1);  // a node that reconnects takes its identity back
  if (options.curve) make_curve_server(socket, options.curve->own);
  try {
    socket.bind(topology.network.listen);
  } catch (const zmq::error_t& error) {
    return make_error(Errc::io_error, "the head cannot listen for nodes at " + topology.network.listen + ": " +
                                          error.what() + " (is the port taken? change network.listen)");
  }
  return std::unique_ptr<NodeRegistry>(
      new NodeRegistry(context, std::move(socket), topology, std::move(options), std::move(events)));
}

NodeRegistry::NodeRegistry(zmq::context_t& context, zmq::socket_t socket, const Topology& topology,
                           NodeRegistryOptions options, NodeEvents events)
    : topology_(topology), options_(std::move(options)), events_(std::move(events)), socket_(std::move(socket)) {
  for (const std::string& name : topology_.nodes) nodes_.emplace(name, Node{});
  const std::string wake_endpoint = "inproc://drk-node-registry-" + std::to_string(reinterpret_cast<uintptr_t>(this));
  wake_receiver_ = zmq::socket_t(context, zmq::socket_type::pull);
  wake_receiver_.bind(wake_endpoint);
  wake_sender_ = zmq::socket_t(context, zmq::socket_type::push);
  wake_sender_.set(zmq::sockopt::linger, 0);
  wake_sender_.connect(wake_endpoint);
  thread_ = std::thread([this] { run(); });
}

NodeRegistry::~NodeRegistry() {
  {
    std::lock_guard lock(wake_mutex_);
    wake_sender_.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  }
  thread_.join();
}

void NodeRegistry::run() {
  block_process_signals_in_this_thread();
  zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0}, {wake_receiver_.handle(), 0, ZMQ_POLLIN, 0}};
  const auto tick_every = std::chrono::milliseconds(std::max(1, topology_.network.heartbeat_ms / 2));
  while (true) {
    poll_sockets(items, 2, tick_every);
    if (items[1].revents & ZMQ_POLLIN) {
      zmq::message_t command;
      (void)wake_receiver_.recv(command, zmq::recv_flags::dontwait);
      if (command.to_string_view() == "stop") break;
      if (command.to_string_view() == "shutdown") {
        std::lock_guard lock(mutex_);
        for (auto& [name, node] : nodes_) {
          if (node.welcomed) {
            send_to(node.routing_id, envelope_frame([&](msg::Envelope::Builder envelope) {
                      envelope.setSender(std::string(kHeadActor));
                      envelope.getBody().initControl().setShutdown();
                    }));
          }
        }
      }
    }
    if (items[0].revents & ZMQ_POLLIN) receive();
    tick();
  }
  socket_.close();
  wake_receiver_.close();
}

void NodeRegistry::receive() {
  for (int handled = 0; handled < 64; ++handled) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait)) return;
    // DEALER: [id, payload]; REQ (drk inspect): [id, empty, payload].
    if (frames.size() < 2 || frames.size() > 3 || (frames.size() == 3 && frames[1].size() != 0)) continue;
    const std::string routing_id = frames[0].to_string();
    // The ZAP identity under CURVE; absent (NULL, not an exception) without it.
    const char* user_id = zmq_msg_gets(frames.back().handle(), "User-Id");
    const std::string authenticated = user_id ? user_id : "";
    auto decoded = decode_envelope_frame(std::move(frames.back()), kMaxNodeMessageBytes);
    if (!decoded) continue;  // counted nowhere: a peer that passed CURVE and sends garbage
    const auto body = decoded->root<msg::Envelope>().getBody();
    if (body.isInspectRequest() && frames.size() == 3 && events_.inspect) {
      std::array<zmq::message_t, 3> reply{std::move(frames[0]), zmq::message_t(), events_.inspect()};
      (void)zmq::send_multipart(socket_, reply, zmq::send_flags::dontwait);
    } else if (body.isNodeJoin()) {
      on_join(routing_id, authenticated, body.getNodeJoin());
    } else if (body.isNodeHeartbeat()) {
      on_heartbeat(routing_id, body.getNodeHeartbeat());
    }
  }
}

void NodeRegistry::on_join(const std::string& routing_id, const std::string& authenticated,
                           msg::NodeJoin::Reader join) {
  const std::string name = join.getNode().cStr();
  std::unique_lock lock(mutex_);
  const auto found = nodes_.find(name);
  if (found == nodes_.end()) {
    std::string known;
    for (const auto& entry : nodes_) known += (known.empty() ? "" : ", ") + entry.first;
    lock.unlock();
    refuse(routing_id, "topology '" + topology_.name + "' has no node named '" + name +
                           "'; its nodes are: " + (known.empty() ? "none" : known));
    return;
  }
  if (options_.curve && authenticated != name) {
    lock.unlock();
    refuse(routing_id, "node '" + name + "' connected with the key of '" + authenticated +
                           "': a node joins with its own key (drk keys generate DIR " + name + ")");
    return;
  }
  NodeAddress address;
  address.host = join.getHost().cStr();
  address.bind_host = join.getBindHost().cStr();
  address.port_base = join.getPortBase();
  address.public_key = join.getPublicKey().cStr();
  Node& node = found->second;
  if (map_complete_ && node.status != NodeStatus::waiting && !(node.address == address)) {
    lock.unlock();
    refuse(routing_id, "node '" + name + "' joined first at " + address_text(node.address) + " and now at " +
                           address_text(address) + ": the run's actors already reach it there; start " +
                           "`drk node` with the same --advertise and --port, or start the run again");
    return;
  }
  node.address = address;
  // A new `drk node` (restarted) has new actor processes: to the others it is back, too.
  const bool restarted = node.incarnation != 0 && node.incarnation != join.getIncarnation();
  node.incarnation = join.getIncarnation();
  const bool back = heard(node, routing_id) || restarted;
  if (!map_complete_) {
    map_complete_ = std::all_of(nodes_.begin(), nodes_.end(),
                                [](const auto& entry) { return entry.second.status != NodeStatus::waiting; });
    if (map_complete_) {
      for (auto& [other_name, other] : nodes_) welcome(other_name, other);
    }
    changed_.notify_all();
    return;
  }
  welcome(name, node);
  lock.unlock();
  if (back && events_.rejoined) events_.rejoined(name);
}

void NodeRegistry::on_heartbeat(const std::string& routing_id, msg::NodeHeartbeat::Reader heartbeat) {
  const std::string name = heartbeat.getNode().cStr();
  std::vector<ProcessView> processes;
  bool back = false;
  {
    std::lock_guard lock(mutex_);
    const auto found = nodes_.find(name);
    // A heartbeat before a join (the head restarted): the node re-joins when it sees no answer.
    if (found == nodes_.end() || found->second.status == NodeStatus::waiting) return;
    if (found->second.incarnation != heartbeat.getIncarnation()) return;  // an old `drk node`
    back = heard(found->second, routing_id);
    processes = read_processes(heartbeat.getProcesses());
  }
  if (back && events_.rejoined) events_.rejoined(name);
  if (events_.processes) events_.processes(name, std::move(processes));
}

bool NodeRegistry::heard(Node& node, const std::string& routing_id) {
  node.routing_id = routing_id;
  node.last_heard_ms = options_.steady_ms();
  const bool back = node.status == NodeStatus::lost;
  node.status = NodeStatus::joined;
  return back;
}

// Under mutex_.
void NodeRegistry::welcome(const std::string& node_name, Node& node) {
  const std::string network = network_yaml();
  send_to(node.routing_id, envelope_frame([&](msg::Envelope::Builder envelope) {
            envelope.setSender(std::string(kHeadActor));
            envelope.setRecipient(node_name);
            auto welcome = envelope.getBody().initNodeWelcome();
            welcome.setRunId(options_.run_id);
            welcome.setTopologyYaml(options_.topology_yaml);
            welcome.setNetworkYaml(network);
          }));
  node.welcomed = true;
}

void NodeRegistry::refuse(const std::string& routing_id, const std::string& reason) {
  send_to(routing_id, envelope_frame([&](msg::Envelope::Builder envelope) {
            envelope.setSender(std::string(kHeadActor));
            envelope.getBody().initNodeWelcome().setRefused(reason);
          }));
}

void NodeRegistry::send_to(const std::string& routing_id, zmq::message_t payload) {
  std::array<zmq::message_t, 2> frames{zmq::message_t(routing_id.data(), routing_id.size()), std::move(payload)};
  (void)zmq::send_multipart(socket_, frames, zmq::send_flags::dontwait);  // a full pipe: the next beat follows
}

// Heartbeats out, silence in: on the registry's thread, about twice per heartbeat period.
void NodeRegistry::tick() {
  const int64_t now = options_.steady_ms();
  std::vector<std::pair<std::string, std::string>> lost;
  {
    std::lock_guard lock(mutex_);
    const bool beat = now - last_tick_ms_ >= topology_.network.heartbeat_ms;
    if (beat) {
      last_tick_ms_ = now;
      ++heartbeat_sequence_;
    }
    for (auto& [name, node] : nodes_) {
      // Until every node has joined nothing runs, so nothing can be lost.
      if (node.status != NodeStatus::joined || !map_complete_) continue;
      const int64_t silent_ms = now - node.last_heard_ms;
      if (silent_ms > topology_.network.node_timeout_ms) {
        node.status = NodeStatus::lost;
        ++node.losses;
        node.last_loss_cause = "no heartbeat for " + std::to_string(silent_ms) + " ms (timeout " +
                               std::to_string(topology_.network.node_timeout_ms) + " ms)";
        lost.emplace_back(name, node.last_loss_cause);
        continue;
      }
      if (beat && node.welcomed) {
        send_to(node.routing_id, envelope_frame([&](msg::Envelope::Builder envelope) {
                  envelope.setSender(std::string(kHeadActor));
                  auto heartbeat = envelope.getBody().initNodeHeartbeat();
                  heartbeat.setNode(std::string(kHeadNode));
                  heartbeat.setIncarnation(options_.run_id);
                  heartbeat.setSequence(heartbeat_sequence_);
                }));
      }
    }
  }
  for (const auto& [name, cause] : lost) {
    if (events_.lost) events_.lost(name, cause);
  }
}

std::string NodeRegistry::network_yaml() const {
  NetworkMap map;
  map.nodes.emplace(std::string(kHeadNode), options_.head);
  for (const auto& [name, node] : nodes_) map.nodes.emplace(name, node.address);
  return network_map_text(map);
}

Result<NetworkMap> NodeRegistry::wait_for_nodes(const std::function<bool()>& interrupted) {
  int64_t last_log = -kMissingNodesLogEveryMs;
  std::unique_lock lock(mutex_);
  while (!map_complete_) {
    if (interrupted()) {
      return make_error(Errc::peer_unavailable, "stopped while waiting for nodes to join");
    }
    const int64_t now = options_.steady_ms();
    if (now - last_log >= kMissingNodesLogEveryMs) {
      last_log = now;
      std::string missing;
      for (const auto& [name, node] : nodes_) {
        if (node.status == NodeStatus::waiting) missing += (missing.empty() ? "" : ", ") + name;
      }
      log::info() << "drk run: waiting for node(s) " << missing << " to join: on each, run `drk node --join tcp://"
                  << options_.head.host << ":" << (options_.head.port_base - 1) << " --name NAME"
                  << (topology_.network.keys.empty() ? "" : " --keys DIR") << "`";
    }
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
  NetworkMap map;
  map.nodes.emplace(std::string(kHeadNode), options_.head);
  for (const auto& [name, node] : nodes_) map.nodes.emplace(name, node.address);
  return map;
}

void NodeRegistry::shutdown_nodes() {
  std::lock_guard lock(wake_mutex_);
  wake_sender_.send(zmq::str_buffer("shutdown"), zmq::send_flags::none);
}

std::vector<NodeView> NodeRegistry::nodes() const {
  const int64_t now = options_.steady_ms();
  std::lock_guard lock(mutex_);
  std::vector<NodeView> views;
  for (const auto& [name, node] : nodes_) {
    NodeView view;
    view.name = name;
    view.status = node.status;
    view.address = node.status == NodeStatus::waiting ? "" : address_text(node.address);
    view.last_heartbeat_age_seconds = node.last_heard_ms < 0 ? -1 : (now - node.last_heard_ms) / 1000.0;
    view.losses = node.losses;
    view.last_loss_cause = node.last_loss_cause;
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace drk::runtime
