// Which part of a multi-node run each task of a Slurm job plays: rank 0 the head, rank k the
// k-th node, joined at the first host of the job; errors for a job of the wrong shape.
#include "runtime/nodes/slurm_placement.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "tests/doctest_drk.h"

using namespace drk::runtime;

namespace {

constexpr const char* kTwoNodes =
    "name: cluster\n"
    "network: {listen: 'tcp://0.0.0.0:7700', keys: keys/}\n"
    "nodes: [gpu1, cpu1]\n"
    "actors:\n"
    "  - {role: learner, process: own}\n"
    "  - {role: evaluator, count: 2, process: own, node: gpu1, gpu: 0}  # evaluator.k on GPU k\n"
    "  - {role: generator, count: 3, process: own, node: cpu1}\n";

Topology topology_of(const std::string& text) {
  auto topology = parse_topology(YAML::Load(text), "cluster.yaml");
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  return *topology;
}

SlurmTask task(int rank, const std::string& host) {
  SlurmTask task;
  task.job_id = "7";
  task.rank = rank;
  task.tasks = 3;
  task.hosts = {"n1", "n2", "n3"};
  task.host = host;
  task.cpus = 16;
  task.gpus = 2;
  return task;
}

std::string error_of(const SlurmTask& task, const Topology& topology) {
  auto placement = place_slurm_task(task, topology, 7800);
  DRK_REQUIRE_FALSE(placement.ok());
  return placement.error().message;
}

}  // namespace

DRK_TEST_CASE("rank 0 is the head and rank k the k-th node, all joining at the job's first host") {
  const Topology topology = topology_of(kTwoNodes);
  auto head = place_slurm_task(task(0, "n1"), topology, 7800);
  DRK_REQUIRE_MESSAGE(head.ok(), head.error().message);
  DRK_CHECK(head->head);
  DRK_CHECK(head->node == "head");
  DRK_CHECK(head->join == "tcp://n1:7700");
  auto gpu1 = place_slurm_task(task(1, "n2"), topology, 7800);
  DRK_REQUIRE_MESSAGE(gpu1.ok(), gpu1.error().message);
  DRK_CHECK_FALSE(gpu1->head);
  DRK_CHECK(gpu1->node == "gpu1");
  DRK_CHECK(gpu1->join == "tcp://n1:7700");
  DRK_CHECK(gpu1->port == 7800);
  auto cpu1 = place_slurm_task(task(2, "n3"), topology, 7800);
  DRK_REQUIRE(cpu1.ok());
  DRK_CHECK(cpu1->node == "cpu1");
}

DRK_TEST_CASE("tasks sharing a host take ports past each other's mailboxes") {
  const Topology topology = topology_of(kTwoNodes);
  SlurmTask second = task(2, "n1");
  second.local_rank = 2;
  auto placement = place_slurm_task(second, topology, 7800);
  DRK_REQUIRE(placement.ok());
  // cpu1 has the most mailboxes: its three generators.
  DRK_CHECK(placement->port == 7800 + 2 * 3);
  second.local_rank = 30000;
  DRK_CHECK(error_of(second, topology).find("past 65535") != std::string::npos);
}

DRK_TEST_CASE("network.advertise is where nodes join, wherever rank 0 runs") {
  std::string text = kTwoNodes;
  text.replace(text.find("keys: keys/"), 0, "advertise: 10.1.2.3, ");
  const Topology topology = topology_of(text);
  auto placement = place_slurm_task(task(0, "n3"), topology, 7800);
  DRK_REQUIRE_MESSAGE(placement.ok(), placement.error().message);
  DRK_CHECK(placement->join == "tcp://10.1.2.3:7700");
}

DRK_TEST_CASE("a job of the wrong shape, a head off the first host, or too few GPUs is refused saying why") {
  const Topology topology = topology_of(kTwoNodes);
  SlurmTask four = task(1, "n2");
  four.tasks = 4;
  DRK_CHECK(error_of(four, topology).find("SLURM_NTASKS=4 but topology cluster has 2 node(s) besides the head: "
                                          "submit with --ntasks=3") != std::string::npos);
  DRK_CHECK(error_of(task(0, "n2"), topology).find("SLURM_PROCID=0 runs on n2") != std::string::npos);
  SlurmTask one_gpu = task(1, "n2");
  one_gpu.gpus = 1;
  const std::string message = error_of(one_gpu, topology);
  DRK_CHECK(message.find("actor evaluator.1") != std::string::npos);
  DRK_CHECK(message.find("pinned to gpu: 1") != std::string::npos);
  DRK_CHECK(message.find("--gpus-per-node=2") != std::string::npos);
  // cpu1 has no pinned actor: no GPU is needed there.
  SlurmTask no_gpu = task(2, "n3");
  no_gpu.gpus = 0;
  DRK_CHECK(place_slurm_task(no_gpu, topology, 7800).ok());
}

DRK_TEST_CASE("a topology without network: cannot run across a job's nodes") {
  const Topology topology = topology_of("name: alone\nactors:\n  - {role: learner}\n");
  SlurmTask only = task(0, "n1");
  only.tasks = 1;
  DRK_CHECK(error_of(only, topology).find("has no network: section") != std::string::npos);
}
