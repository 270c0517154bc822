#include "runtime/nodes/head_network.h"

#include <boost/asio/post.hpp>
#include <filesystem>

#include "runtime/transport/envelope_frame.h"
#include "runtime/log.h"
#include "runtime/nodes/run_network.h"

namespace drk::runtime {

Result<std::unique_ptr<HeadNetwork>> HeadNetwork::start(const Topology& topology, const std::string& run_dir,
                                                        uint64_t run_id, boost::asio::io_context& io,
                                                        const InspectionBoard& board,
                                                        const std::function<bool()>& interrupted) {
  std::unique_ptr<HeadNetwork> network(new HeadNetwork(io, topology));
  if (!topology.network.enabled) return network;
  const NetworkSettings& settings = topology.network;
  if (settings.keys.empty() && !is_loopback_endpoint(settings.listen)) {
    return make_error(Errc::invalid_argument,
                      "network.listen " + settings.listen +
                          " is reachable from other machines, so links must be encrypted: set network.keys "
                          "to a key directory (drk keys generate keys/ head " +
                          (topology.nodes.empty() ? std::string("NODE") : topology.nodes.front()) +
                          "), or listen on tcp://127.0.0.1:PORT");
  }
  const std::string keys = settings.keys.empty() ? "" : std::filesystem::absolute(settings.keys).lexically_normal().string();
  auto curve = load_optional_curve(keys, std::string(kHeadNode));
  if (!curve) return curve.error();
  if (*curve) network->authenticator_ = std::make_unique<ZapAuthenticator>(network->context_, (*curve)->allowed);

  NodeRegistryOptions options;
  options.curve = *curve;
  options.head = head_address(settings, *curve ? (*curve)->own.public_key : "");
  options.topology_yaml = YAML::Dump(topology.resolved);
  options.run_id = run_id;
  HeadNetwork* self = network.get();
  NodeEvents events;
  events.lost = [self](const std::string& node, const std::string& cause) {
    {
      std::lock_guard lock(self->mutex_);
      self->lost_[node] = cause;
    }
    boost::asio::post(self->io_, [self, node, cause] {
      if (self->handlers_.lost) self->handlers_.lost(node, cause);
    });
  };
  events.rejoined = [self](const std::string& node) {
    {
      std::lock_guard lock(self->mutex_);
      self->lost_.erase(node);
    }
    boost::asio::post(self->io_, [self, node] {
      if (self->handlers_.rejoined) self->handlers_.rejoined(node);
    });
  };
  events.processes = [self](const std::string& node, std::vector<ProcessView> processes) {
    std::lock_guard lock(self->mutex_);
    self->reported_[node] = std::move(processes);
  };
  events.inspect = [self, &board] {
    SystemView view = board.view();
    view.nodes = self->nodes();  // fresh, and known before the run starts
    view.refused_peers = std::max(view.refused_peers, self->refused_peers());
    return envelope_frame([&](msg::Envelope::Builder envelope) {
      envelope.setSender(std::string(kHeadActor));
      write_system_report(view, envelope.getBody().initSystemReport());
    });
  };
  auto registry = NodeRegistry::start(network->context_, topology, std::move(options), std::move(events));
  if (!registry) return registry.error();
  network->registry_ = std::move(*registry);

  auto map = network->registry_->wait_for_nodes(interrupted);
  if (!map) return map.error();
  if (auto written = write_run_network(run_dir, NodeIdentity{std::string(kHeadNode), keys}, *map); !written) {
    return written.error();
  }
  network->network_.local_node = std::string(kHeadNode);
  network->network_.map = std::move(*map);
  network->network_.curve = *curve;
  log::info() << "drk run: every node has joined (" << topology.nodes.size() << ")";
  return network;
}

HeadNetwork::~HeadNetwork() {
  registry_.reset();
  authenticator_.reset();
}

void HeadNetwork::set_handlers(HeadNetworkHandlers handlers) { handlers_ = std::move(handlers); }

void HeadNetwork::shutdown_nodes() {
  if (registry_) registry_->shutdown_nodes();
}

std::vector<ProcessView> HeadNetwork::node_processes() const {
  std::lock_guard lock(mutex_);
  std::vector<ProcessView> all;
  for (const auto& [node, processes] : reported_) {
    const auto lost = lost_.find(node);
    for (ProcessView process : processes) {
      if (lost != lost_.end()) {
        process.status = ProcessStatus::down;
        process.pid = 0;
        process.recent_causes.push_back("node " + node + " lost: " + lost->second);
      }
      all.push_back(std::move(process));
    }
  }
  return all;
}

std::vector<NodeView> HeadNetwork::nodes() const { return registry_ ? registry_->nodes() : std::vector<NodeView>(); }

uint64_t HeadNetwork::refused_peers() const { return authenticator_ ? authenticator_->refused() : 0; }

}  // namespace drk::runtime
