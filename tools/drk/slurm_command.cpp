// drk slurm and drk slurm-task: a multi-node topology run as one Slurm job (docs/multi-node.md,
// "On a Slurm cluster"). `drk slurm` writes the sbatch script (tools/drk/slurm_batch_script.h);
// each task of its job runs `drk slurm-task`, which reads Slurm's environment
// (runtime/nodes/slurm_environment.h) and becomes the head or a node
// (runtime/nodes/slurm_placement.h), in this process.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "base/program_path.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/nodes/curve_keys.h"
#include "runtime/nodes/node_main.h"
#include "runtime/nodes/slurm_environment.h"
#include "runtime/nodes/slurm_placement.h"
#include "runtime/process_main.h"
#include "runtime/topology/topology.h"
#include "tools/drk/commands.h"
#include "tools/drk/run_summary.h"
#include "tools/drk/slurm_batch_script.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

struct SlurmArgs {
  SbatchOptions sbatch;
  std::string output;  // empty: stdout
};

struct SlurmTaskArgs {
  std::string topology_path;
  std::vector<std::string> overrides;
  bool fresh = false;
  uint16_t node_port = 7800;
};

int write_script(SlurmArgs args) {
  auto topology = runtime::load_topology(args.sbatch.topology_path, args.sbatch.overrides);
  if (!topology) {
    log::error() << "drk slurm: " << topology.error().message;
    return 1;
  }
  if (topology->nodes.empty()) {
    log::error() << "drk slurm: topology " << topology->name << " (" << args.sbatch.topology_path
                 << ") has no nodes: besides the head; a Slurm job runs one task per node: list them under "
                    "`nodes:` and place actors there (docs/multi-node.md)";
    return 1;
  }
  args.sbatch.topology_path = fs::absolute(args.sbatch.topology_path).lexically_normal().string();
  if (args.sbatch.drk.empty()) args.sbatch.drk = this_program_path();
  if (args.sbatch.drk.empty()) {
    log::error() << "drk slurm: cannot find the drk program (/proc/self/exe): name it with --drk PATH";
    return 1;
  }
  const std::string script = sbatch_script(*topology, args.sbatch);
  if (args.output.empty()) {
    std::cout << script;
    return 0;
  }
  std::ofstream file(args.output);
  file << script;
  file.close();
  if (!file) {
    log::error() << "drk slurm: cannot write " << args.output << ": choose another --out";
    return 1;
  }
  std::cerr << "wrote " << args.output << ": submit it with `sbatch " << args.output << "`\n";
  return 0;
}

int run_task(const SlurmTaskArgs& args) {
  auto task = runtime::read_slurm_task(runtime::process_environment());
  if (!task) {
    log::error() << "drk slurm-task: " << task.error().message;
    return 1;
  }
  auto topology = runtime::load_topology(args.topology_path, args.overrides);
  if (!topology) {
    log::error() << "drk slurm-task: " << topology.error().message;
    return 1;
  }
  auto placement = runtime::place_slurm_task(*task, *topology, args.node_port);
  if (!placement) {
    log::error() << "drk slurm-task: " << placement.error().message;
    return 1;
  }
  log::info() << "drk slurm-task: task " << task->rank << " of " << task->tasks << " (job " << task->job_id
              << ") on " << task->host << " with " << task->cpus << " CPU(s) and " << task->gpus << " GPU(s): "
              << (placement->head ? "the head, nodes join at " + placement->join
                                  : "node " + placement->node + ", joining " + placement->join);
  if (placement->head) {
    runtime::RunOptions run;
    run.topology_path = args.topology_path;
    run.overrides = args.overrides;
    run.fresh = args.fresh;
    run.summary = finish_run;
    return runtime::run_head(run);
  }
  runtime::NodeArgs node;
  node.join = placement->join;
  node.name = placement->node;
  node.port = placement->port;
  node.keys = topology->network.keys;
  // Reached by its Slurm name, as the head is; on loopback (one machine) run_node picks the head's.
  if (!runtime::is_loopback_endpoint(node.join)) node.advertise = task->host;
  return runtime::run_node(node);
}

}  // namespace

void add_slurm_commands(CLI::App& drk, Actions& actions) {
  auto slurm = std::make_shared<SlurmArgs>();
  CLI::App* script = drk.add_subcommand(
      "slurm",
      "write the sbatch script that runs a multi-node topology as one Slurm job\n"
      "\n"
      "Writes a Slurm batch script: one task per node of TOPOLOGY.yaml (the head and each of\n"
      "`nodes:`), each `srun drk slurm-task TOPOLOGY.yaml`, which becomes the head (task 0) or\n"
      "joins it as the node of its rank. Submit it with sbatch (docs/multi-node.md).");
  script->add_option("TOPOLOGY.yaml", slurm->sbatch.topology_path, "the topology, with network: and nodes:")
      ->required()
      ->type_name("");
  script->add_option("--set", slurm->sbatch.overrides, "override a value of the topology (as drk run), in every task")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  script->add_flag("--fresh", slurm->sbatch.fresh, "the head starts over (drk run --fresh)");
  script->add_option("--out", slurm->output, "write the script there (default: stdout)")->type_name("FILE");
  script->add_option("--partition", slurm->sbatch.partition, "#SBATCH --partition")->type_name("NAME");
  script->add_option("--time", slurm->sbatch.time, "#SBATCH --time, e.g. 4:00:00")->type_name("LIMIT");
  script->add_option("--account", slurm->sbatch.account, "#SBATCH --account")->type_name("NAME");
  script->add_option("--gpus-per-node", slurm->sbatch.gpus_per_node,
                     "#SBATCH --gpus-per-node (default: enough for the highest gpu: of the topology)")
      ->type_name("N");
  script->add_option("--cpus-per-task", slurm->sbatch.cpus_per_task, "#SBATCH --cpus-per-task")->type_name("N");
  script->add_option("--sbatch", slurm->sbatch.sbatch_options, "any other sbatch option, as an #SBATCH line")
      ->type_name("OPTION")
      ->allow_extra_args(false);
  script->add_option("--node-port", slurm->sbatch.node_port, "first mailbox port of each node (7800)")
      ->type_name("P")
      ->check(CLI::Range(1, 65000).description(""));
  script->add_option("--drk", slurm->sbatch.drk, "the drk program the tasks run (default: this one)")->type_name("PATH");
  actions[script] = [slurm] { return write_script(*slurm); };

  auto task = std::make_shared<SlurmTaskArgs>();
  CLI::App* task_command = drk.add_subcommand(
      "slurm-task",
      "one task of the Slurm job `drk slurm` writes: the head or a node\n"
      "\n"
      "Reads the task's place from Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NODELIST, ...):\n"
      "task 0 runs the head (drk run TOPOLOGY.yaml), task k joins it as the k-th node of\n"
      "`nodes:` (drk node --join tcp://FIRST_HOST:PORT). Run under srun, inside an allocation.");
  task_command->add_option("TOPOLOGY.yaml", task->topology_path, "the topology")->required()->type_name("");
  task_command->add_option("--set", task->overrides, "override a value of the topology (as drk run)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  task_command->add_flag("--fresh", task->fresh, "the head starts over (drk run --fresh)");
  task_command
      ->add_option("--node-port", task->node_port,
                   "first mailbox port of a node (7800); tasks sharing a host (SLURM_LOCALID)\n"
                   "take the ports after it")
      ->type_name("P")
      ->check(CLI::Range(1, 65000).description(""));
  actions[task_command] = [task] { return run_task(*task); };
}

}  // namespace drk::tools
