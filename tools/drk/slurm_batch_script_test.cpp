// The sbatch script of `drk slurm`: the job's shape from the topology, the options passed
// through, and a command line the shell reads back as written.
#include "tools/drk/slurm_batch_script.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "tests/doctest_drk.h"

using namespace drk;

namespace {

runtime::Topology cluster(const std::string& gpu) {
  auto topology = runtime::parse_topology(
      YAML::Load("name: cluster\n"
                 "network: {listen: 'tcp://0.0.0.0:7700', keys: keys/}\n"
                 "nodes: [gpu1, cpu1]\n"
                 "actors:\n"
                 "  - {role: learner, process: own}\n"
                 "  - {role: evaluator, count: 2, process: own, node: gpu1" + gpu + "}\n"
                 "  - {role: generator, process: own, node: cpu1}\n"),
      "cluster.yaml");
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  return *topology;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

DRK_TEST_CASE("the job has one task per node and the head, and its tasks run drk slurm-task") {
  tools::SbatchOptions options;
  options.drk = "/opt/drk/bin/drk";
  options.topology_path = "/home/me/cluster.yaml";
  options.overrides = {"experiment.steps=3", "run_dir=runs/my run"};
  options.node_port = 7900;
  options.fresh = true;
  const std::string script = tools::sbatch_script(cluster(", gpu: 0"), options);
  DRK_CHECK(script.starts_with("#!/bin/bash\n"));
  DRK_CHECK(contains(script, "#SBATCH --job-name=drk-cluster\n"));
  DRK_CHECK(contains(script, "#SBATCH --nodes=3\n"));
  DRK_CHECK(contains(script, "#SBATCH --ntasks=3\n"));
  DRK_CHECK(contains(script, "#SBATCH --ntasks-per-node=1\n"));
  DRK_CHECK(contains(script, "#SBATCH --no-kill\n"));
  // evaluator.0 and evaluator.1 pinned to GPUs 0 and 1.
  DRK_CHECK(contains(script, "#SBATCH --gpus-per-node=2\n"));
  DRK_CHECK_FALSE(contains(script, "--partition"));
  DRK_CHECK(contains(script, "srun --kill-on-bad-exit=0 --wait=0 --no-kill --distribution=block"));
  DRK_CHECK(contains(script, "/opt/drk/bin/drk slurm-task /home/me/cluster.yaml --node-port 7900 --fresh"));
  DRK_CHECK(contains(script, "--set experiment.steps=3"));
  DRK_CHECK(contains(script, "--set 'run_dir=runs/my run'"));
}

DRK_TEST_CASE("partition, time, account, GPUs, CPUs and any sbatch option pass through") {
  tools::SbatchOptions options;
  options.drk = "drk";
  options.topology_path = "/t.yaml";
  options.partition = "h200";
  options.time = "4:00:00";
  options.account = "lab";
  options.gpus_per_node = "8";
  options.cpus_per_task = "64";
  options.sbatch_options = {"--exclusive", "--mail-type=END"};
  const std::string script = tools::sbatch_script(cluster(""), options);
  DRK_CHECK(contains(script, "#SBATCH --partition=h200\n"));
  DRK_CHECK(contains(script, "#SBATCH --time=4:00:00\n"));
  DRK_CHECK(contains(script, "#SBATCH --account=lab\n"));
  DRK_CHECK(contains(script, "#SBATCH --gpus-per-node=8\n"));
  DRK_CHECK(contains(script, "#SBATCH --cpus-per-task=64\n"));
  DRK_CHECK(contains(script, "#SBATCH --exclusive\n#SBATCH --mail-type=END\n"));
}

DRK_TEST_CASE("a topology without pinned actors asks for no GPUs") {
  tools::SbatchOptions options;
  options.drk = "drk";
  options.topology_path = "/t.yaml";
  DRK_CHECK_FALSE(contains(tools::sbatch_script(cluster(""), options), "gpus-per-node"));
}

DRK_TEST_CASE("words the shell would split or expand are single-quoted") {
  DRK_CHECK(tools::shell_quoted("experiment.steps=3") == "experiment.steps=3");
  DRK_CHECK(tools::shell_quoted("a b") == "'a b'");
  DRK_CHECK(tools::shell_quoted("$HOME") == "'$HOME'");
  DRK_CHECK(tools::shell_quoted("it's") == "'it'\\''s'");
  DRK_CHECK(tools::shell_quoted("") == "''");
}
