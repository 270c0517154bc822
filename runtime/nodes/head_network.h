// HeadNetwork: the head's part of a multi-node run (docs/multi-node.md), or nothing on one
// machine (a topology without `network:`).
//
// start() loads the head's CURVE identity (network.keys; required unless network.listen is a
// loopback address), starts the NodeRegistry at network.listen, waits until every node has
// joined, and writes RUN_DIR/network.yaml and node.yaml for the head's own processes. From then
// on the registry's news reaches `io`'s thread through the handlers (set_handlers) and node
// processes' reports are kept for inspection.
//
// Thread-safety: start, set_handlers, transport_network and shutdown_nodes from the thread that
// runs `io`; node_processes, nodes and refused_peers from any thread. Must be destroyed before
// `io`.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "runtime/inspection/inspection_board.h"
#include "runtime/nodes/node_registry.h"
#include "base/result.h"
#include "runtime/topology/topology.h"
#include "runtime/transport/transport.h"
#include "runtime/nodes/zap_authenticator.h"

namespace drk::runtime {

// Run on io's thread.
struct HeadNetworkHandlers {
  std::function<void(const std::string& node, const std::string& cause)> lost;
  std::function<void(const std::string& node)> rejoined;
};

class HeadNetwork {
 public:
  // `interrupted` is polled while waiting for nodes (peer_unavailable when it turns true).
  static Result<std::unique_ptr<HeadNetwork>> start(const Topology& topology, const std::string& run_dir,
                                                    uint64_t run_id, boost::asio::io_context& io,
                                                    const InspectionBoard& board,
                                                    const std::function<bool()>& interrupted);
  ~HeadNetwork();

  TransportNetwork transport_network() const { return network_; }
  void set_handlers(HeadNetworkHandlers handlers);
  void shutdown_nodes();

  // The processes of every node as their supervisors last reported them; a lost node's are
  // down, with the loss as their cause.
  std::vector<ProcessView> node_processes() const;
  std::vector<NodeView> nodes() const;
  uint64_t refused_peers() const;

 private:
  HeadNetwork(boost::asio::io_context& io, const Topology& topology) : io_(io), topology_(topology) {}

  boost::asio::io_context& io_;
  const Topology& topology_;
  TransportNetwork network_;
  HeadNetworkHandlers handlers_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<ProcessView>> reported_;  // by node
  std::map<std::string, std::string> lost_;                   // node -> cause, while lost
  zmq::context_t context_;                                    // the node endpoint's own
  std::unique_ptr<ZapAuthenticator> authenticator_;
  std::unique_ptr<NodeRegistry> registry_;
};

}  // namespace drk::runtime
