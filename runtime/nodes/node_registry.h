// NodeRegistry: the head's side of a multi-node run (docs/multi-node.md).
//
// It binds a ROUTER socket at network.listen (a CURVE server when the run has keys) and speaks
// the node protocol of messages/drk.capnp with every `drk node`:
//   - NodeJoin: before the run starts, every node of the topology's `nodes:` must join; once
//     all have, the network map is complete and each gets a NodeWelcome (the resolved topology
//     and the map). Later, a node that joins again (its `drk node` restarted, or it lost the
//     head for a while) is welcomed at once, provided it comes back at the address it had;
//     a node the topology does not name, or one that moved, gets a NodeWelcome with `refused`.
//     With CURVE, a node must join under the identity its key belongs to.
//   - NodeHeartbeat: both ways, every network.heartbeat_ms. A joined node silent for
//     network.node_timeout_ms is lost: `lost` runs with the cause. A lost node that is heard
//     again (a heartbeat or a join) is back: `rejoined` runs.
//   - InspectRequest (from `drk inspect tcp://HEAD:PORT`, a REQ socket): answered with
//     `inspect()`.
//
// Thread-safety: the registry runs on its own thread; the callbacks run there. wait_for_nodes,
// nodes, shutdown_nodes may be called from any one other thread. The zmq context must outlive
// the registry.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "runtime/nodes/curve_keys.h"
#include "runtime/inspection/inspection_view.h"
#include "runtime/nodes/network_map.h"
#include "base/result.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

struct NodeRegistryOptions {
  std::optional<CurveIdentity> curve;  // the head's identity; links are CURVE when set
  NodeAddress head;                    // the head's entry of the network map
  std::string topology_yaml;           // the resolved topology, sent in every welcome
  uint64_t run_id = 0;
  std::function<int64_t()> steady_ms;  // a monotonic clock in milliseconds (a seam for tests)
};

struct NodeEvents {
  std::function<void(const std::string& node, const std::string& cause)> lost;
  std::function<void(const std::string& node)> rejoined;
  std::function<void(const std::string& node, std::vector<ProcessView> processes)> processes;
  std::function<zmq::message_t()> inspect;  // the reply to an InspectRequest
};

class NodeRegistry {
 public:
  // `topology` must outlive the registry. Errors: io_error when network.listen cannot bind.
  static Result<std::unique_ptr<NodeRegistry>> start(zmq::context_t& context, const Topology& topology,
                                                     NodeRegistryOptions options, NodeEvents events);
  ~NodeRegistry();
  NodeRegistry(const NodeRegistry&) = delete;
  NodeRegistry& operator=(const NodeRegistry&) = delete;

  // Waits until every node of the topology has joined, logging who is missing now and then;
  // returns the complete map (the head included). peer_unavailable when
  // `interrupted()` turns true first.
  Result<NetworkMap> wait_for_nodes(const std::function<bool()>& interrupted);
  // Control.shutdown to every node (the run is over); returns once sent.
  void shutdown_nodes();
  std::vector<NodeView> nodes() const;

 private:
  struct Node {
    NodeStatus status = NodeStatus::waiting;
    std::string routing_id;
    NodeAddress address;
    uint64_t incarnation = 0;
    int64_t last_heard_ms = -1;
    uint32_t losses = 0;
    std::string last_loss_cause;
    bool welcomed = false;
  };
  NodeRegistry(zmq::context_t& context, zmq::socket_t socket, const Topology& topology,
               NodeRegistryOptions options, NodeEvents events);
  void run();
  void receive();
  void on_join(const std::string& routing_id, const std::string& authenticated, msg::NodeJoin::Reader join);
  void on_heartbeat(const std::string& routing_id, msg::NodeHeartbeat::Reader heartbeat);
  void welcome(const std::string& node_name, Node& node);
  void refuse(const std::string& routing_id, const std::string& reason);
  void send_to(const std::string& routing_id, zmq::message_t payload);
  void tick();
  // Under mutex_; true when the node is back from being lost.
  bool heard(Node& node, const std::string& routing_id);
  std::string network_yaml() const;

  const Topology& topology_;
  NodeRegistryOptions options_;
  NodeEvents events_;
  zmq::socket_t socket_;
  zmq::socket_t wake_receiver_;  // commands from other threads (shutdown, stop)
  zmq::socket_t wake_sender_;
  std::mutex wake_mutex_;

  mutable std::mutex mutex_;  // guards nodes_ and map_complete_
  std::condition_variable changed_;
  std::map<std::string, Node, std::less<>> nodes_;
  bool map_complete_ = false;
  uint64_t heartbeat_sequence_ = 0;
  int64_t last_tick_ms_ = 0;
  std::thread thread_;
};

}  // namespace drk::runtime
