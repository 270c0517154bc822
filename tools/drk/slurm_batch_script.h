// The sbatch script of `drk slurm` (docs/multi-node.md): one Slurm job that runs a multi-node
// topology, one task per node (the head and each node of `nodes:`), whose tasks are
// `srun DRK slurm-task TOPOLOGY.yaml ...` (runtime/nodes/slurm_placement.h says which part each
// task plays).
//
// The job asks for as many nodes and tasks as the topology has nodes plus the head, one task per
// node, and --no-kill: a node Slurm takes away ends its task only, and the head sees a lost node
// (srun's --kill-on-bad-exit=0 and --wait=0 keep the other tasks running). --gpus-per-node is
// the option given, else the most GPUs an actor of the topology is pinned to (`gpu: K` needs
// K + 1), else not asked for. Every value is quoted for the shell.
//
// Thread-safety: a free function of values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/topology/topology.h"

namespace drk::tools {

struct SbatchOptions {
  std::string drk;                     // the drk program the tasks run
  std::string topology_path;           // as the tasks will read it (absolute)
  std::vector<std::string> overrides;  // --set KEY=VALUE, passed to every task
  bool fresh = false;                  // --fresh, passed to the head
  uint16_t node_port = 7800;           // --node-port of the tasks
  std::string partition;               // each: #SBATCH --NAME=VALUE when not empty
  std::string time;
  std::string account;
  std::string gpus_per_node;           // empty: from the topology's pinned actors
  std::string cpus_per_task;
  std::vector<std::string> sbatch_options;  // more, each an "#SBATCH OPTION" line as given
};

std::string sbatch_script(const runtime::Topology& topology, const SbatchOptions& options);

// `text` as one word of a POSIX shell: as is when it holds only safe characters, else in single
// quotes.
std::string shell_quoted(const std::string& text);

}  // namespace drk::tools
