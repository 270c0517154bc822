// What one task of a Slurm job is in a multi-node run (`drk slurm-task`, docs/multi-node.md).
//
// A job runs one task per node of the topology plus one for the head (SLURM_NTASKS =
// nodes + 1). The task of rank 0 is the head (`drk run`); the task of rank k >= 1 joins as the
// k-th node of `nodes:` (`drk node --join`), by rank and not by host name, so that the YAML need
// not know which hosts Slurm will choose. Nodes join the head at network.advertise when the
// topology sets it, else at the first host of SLURM_JOB_NODELIST (where rank 0 runs with
// block distribution, which place_slurm_task checks), at network.listen's port. A node's
// mailboxes start at `node_port`, moved up by SLURM_LOCALID times the most mailboxes any node
// has, so that tasks sharing a host do not share ports. Actors pinned to `gpu: K` on a task's
// node need K below the GPUs Slurm gave that host.
//
// Thread-safety: a free function. Errors: invalid_argument naming the Slurm variable or the
// topology's key, and the fix (the job's shape, --gpus-per-node, network.listen).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "runtime/nodes/slurm_environment.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

struct SlurmPlacement {
  bool head = false;  // rank 0: this task runs the head
  std::string node;   // the node it is: "head", or the name of `nodes:` it joins as
  std::string join;   // tcp://HOST:PORT where nodes join the head
  uint16_t port = 0;  // a node's first mailbox port
};

Result<SlurmPlacement> place_slurm_task(const SlurmTask& task, const Topology& topology, uint16_t node_port);

}  // namespace drk::runtime
