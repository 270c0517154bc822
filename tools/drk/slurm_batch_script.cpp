#include "tools/drk/slurm_batch_script.h"

#include <algorithm>
#include <sstream>

namespace drk::tools {
namespace {

// GPUs every node needs for the actors pinned on it: the highest `gpu: K` plus one; 0 for none.
int pinned_gpus(const runtime::Topology& topology) {
  int most = 0;
  for (const auto& actor : topology.actors) most = std::max(most, actor.gpu + 1);
  return most;
}

}  // namespace

std::string shell_quoted(const std::string& text) {
  const bool safe = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./=:,@%+-").find(c) != std::string_view::npos;
  });
  if (safe) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string sbatch_script(const runtime::Topology& topology, const SbatchOptions& options) {
  const std::size_t tasks = topology.nodes.size() + 1;
  std::ostringstream script;
  script << "#!/bin/bash\n"
         << "# The Slurm job of topology " << topology.name << " (" << options.topology_path << "), written by\n"
         << "# `drk slurm`: task 0 runs the head (`drk run`), task k joins as node k of `nodes:`";
  for (std::size_t k = 0; k < topology.nodes.size(); ++k) script << (k == 0 ? " (" : ", ") << topology.nodes[k];
  script << (topology.nodes.empty() ? "" : ")") << ".\n"
         << "# Submit with `sbatch THIS_FILE`; see docs/multi-node.md, \"On a Slurm cluster\".\n"
         << "#SBATCH --job-name=" << shell_quoted("drk-" + topology.name) << "\n"
         << "#SBATCH --nodes=" << tasks << "\n"
         << "#SBATCH --ntasks=" << tasks << "\n"
         << "#SBATCH --ntasks-per-node=1\n"
         << "#SBATCH --no-kill\n";
  const auto option = [&](const char* name, const std::string& value) {
    if (!value.empty()) script << "#SBATCH --" << name << "=" << shell_quoted(value) << "\n";
  };
  option("partition", options.partition);
  option("time", options.time);
  option("account", options.account);
  const int gpus = pinned_gpus(topology);
  option("gpus-per-node", !options.gpus_per_node.empty() ? options.gpus_per_node
                                                          : (gpus > 0 ? std::to_string(gpus) : std::string()));
  option("cpus-per-task", options.cpus_per_task);
  for (const auto& extra : options.sbatch_options) script << "#SBATCH " << extra << "\n";
  script << "\n"
         << "# A task that ends, or whose node Slurm takes away, leaves the others running: the head\n"
         << "# sees a lost node and moves its work.\n"
         << "srun --kill-on-bad-exit=0 --wait=0 --no-kill --distribution=block \\\n"
         << "  " << shell_quoted(options.drk) << " slurm-task " << shell_quoted(options.topology_path)
         << " --node-port " << options.node_port;
  if (options.fresh) script << " --fresh";
  for (const auto& override_text : options.overrides) script << " \\\n  --set " << shell_quoted(override_text);
  script << "\n";
  return script.str();
}

}  // namespace drk::tools
