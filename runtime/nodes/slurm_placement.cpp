#include "runtime/nodes/slurm_placement.h"

#include <algorithm>

#include "runtime/nodes/network_map.h"

namespace drk::runtime {
namespace {

Error misplaced(const std::string& message) { return make_error(Errc::invalid_argument, message); }

// The most mailboxes any node of the topology (the head included) has: the ports one task takes.
std::size_t ports_per_task(const Topology& topology) {
  std::size_t most = topology.mailboxes_on(kHeadNode).size();
  for (const auto& node : topology.nodes) most = std::max(most, topology.mailboxes_on(node).size());
  return most;
}

Status check_gpus(const SlurmTask& task, const Topology& topology, const std::string& node) {
  for (const ActorEntry& actor : topology.actors) {
    if (actor.node != node || actor.gpu < task.gpus) continue;
    return misplaced("actor " + actor.name + " (" + actor.where + ") on node " + node + " is pinned to gpu: " +
                     std::to_string(actor.gpu) + ", but Slurm gave host " + task.host + " " +
                     std::to_string(task.gpus) + " GPU(s) (SLURM_GPUS_ON_NODE, CUDA_VISIBLE_DEVICES): submit with " +
                     "--gpus-per-node=" + std::to_string(actor.gpu + 1) + " or more");
  }
  return {};
}

}  // namespace

Result<SlurmPlacement> place_slurm_task(const SlurmTask& task, const Topology& topology, uint16_t node_port) {
  if (!topology.network.enabled) {
    return misplaced("topology " + topology.name +
                     " has no network: section; a Slurm job runs it across nodes, so it needs network.listen "
                     "(e.g. tcp://0.0.0.0:7700) and network.keys (docs/multi-node.md)");
  }
  const int wanted = static_cast<int>(topology.nodes.size()) + 1;
  if (task.tasks != wanted) {
    return misplaced("SLURM_NTASKS=" + std::to_string(task.tasks) + " but topology " + topology.name + " has " +
                     std::to_string(topology.nodes.size()) + " node(s) besides the head: submit with --ntasks=" +
                     std::to_string(wanted) + " (the script of `drk slurm` asks for it)");
  }
  auto listen = parse_tcp_endpoint(topology.network.listen);
  if (!listen) return make_error(listen.error().code, "network.listen: " + listen.error().message);
  const std::string head_host = topology.network.advertise.empty() ? task.hosts.front() : topology.network.advertise;
  if (task.rank == 0 && topology.network.advertise.empty() && task.host != task.hosts.front()) {
    return misplaced("SLURM_PROCID=0 runs on " + task.host + " (SLURMD_NODENAME), but the first host of " +
                     "SLURM_JOB_NODELIST is " + task.hosts.front() +
                     ", where the nodes look for the head: run srun with --distribution=block, or set "
                     "network.advertise to the head's address");
  }
  SlurmPlacement placement;
  placement.head = task.rank == 0;
  placement.node = placement.head ? std::string(kHeadNode) : topology.nodes[task.rank - 1];
  placement.join = "tcp://" + head_host + ":" + std::to_string(listen->port);
  const std::size_t port = node_port + static_cast<std::size_t>(task.local_rank) * ports_per_task(topology);
  if (port + ports_per_task(topology) > 65536) {
    return misplaced("SLURM_LOCALID=" + std::to_string(task.local_rank) + " moves the mailbox ports of node " +
                     placement.node + " past 65535: choose a lower --node-port");
  }
  placement.port = static_cast<uint16_t>(port);
  if (auto gpus = check_gpus(task, topology, placement.node); !gpus) return gpus.error();
  return placement;
}

}  // namespace drk::runtime
