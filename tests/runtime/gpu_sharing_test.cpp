// check_one_evaluator_per_gpu: on cuda every Evaluator needs a GPU of its node to itself (an
// unpinned one takes the first visible GPU); on the CPU any number run side by side.
#include "runtime/topology/gpu_sharing.h"

#include <string>

#include "runtime/topology/experiment_keys.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

// Registers `experiment.device` itself, as the drk tool's roles do: a test must not depend on
// another test case having registered it first.
Topology loaded(const std::string& actors, const std::string& device = "cuda") {
  register_experiment_keys({{"device", ValueKind::text, "cpu", {"cpu", "cuda"}}});
  testing::RunDir dir;
  auto topology = load_topology(dir.write("t.yaml",
                                          "name: t\nnetwork: {listen: tcp://127.0.0.1:7700}\nnodes: [gpu1]\nactors:\n" +
                                              actors + "experiment: {device: " + device + "}\n"));
  DRK_REQUIRE_MESSAGE(topology.ok(), (topology.ok() ? "" : topology.error().message));
  return *topology;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

DRK_TEST_CASE("Evaluators each on a GPU of their own pass, on any node; on the CPU any number pass") {
  DRK_CHECK(check_one_evaluator_per_gpu(loaded("  - {role: evaluator, gpus: [0, 1]}\n"
                                               "  - {role: evaluator, count: 2, process: own, node: gpu1, gpu: 0}\n"))
                .ok());
  DRK_CHECK(check_one_evaluator_per_gpu(loaded("  - {role: evaluator, count: 1, process: own}\n")).ok());
  DRK_CHECK(check_one_evaluator_per_gpu(loaded("  - {role: evaluator, count: 4, process: own}\n", "cpu")).ok());
}

DRK_TEST_CASE("two Evaluators on one GPU of a node are refused, named with their entries and the fix") {
  const auto unpinned = check_one_evaluator_per_gpu(loaded("  - {role: evaluator, count: 2, process: own}\n"));
  DRK_REQUIRE_FALSE(unpinned.ok());
  DRK_CHECK(unpinned.error().code == Errc::invalid_argument);
  DRK_CHECK_MESSAGE(contains(unpinned.error().message, "evaluator.0 ("), unpinned.error().message);
  DRK_CHECK_MESSAGE(contains(unpinned.error().message, "t.yaml:5) and evaluator.1 ("), unpinned.error().message);
  DRK_CHECK_MESSAGE(contains(unpinned.error().message,
                             "t.yaml:5) would evaluate on the same GPU, the first visible one of node head"),
                    unpinned.error().message);
  DRK_CHECK(contains(unpinned.error().message, "Give each Evaluator its own GPU (`gpus: [0, 1]`"));

  // An unpinned one beside one pinned to GPU 0; and two entries naming GPU 1 of another node.
  const auto mixed = check_one_evaluator_per_gpu(loaded("  - {role: evaluator, name: a, process: own}\n"
                                                        "  - {role: evaluator, name: b, process: own, gpu: 0}\n"
                                                        "  - {role: evaluator, name: c, node: gpu1, gpu: 1}\n"
                                                        "  - {role: evaluator, name: d, node: gpu1, gpu: 1}\n"));
  DRK_REQUIRE_FALSE(mixed.ok());
  DRK_CHECK_MESSAGE(contains(mixed.error().message, "t.yaml:5) and b ("), mixed.error().message);
  DRK_CHECK_MESSAGE(contains(mixed.error().message,
                             "t.yaml:6) would evaluate on the same GPU, the first visible one of node head"),
                    mixed.error().message);
  DRK_CHECK_MESSAGE(contains(mixed.error().message, "t.yaml:7) and d ("), mixed.error().message);
  DRK_CHECK_MESSAGE(contains(mixed.error().message, "t.yaml:8) would evaluate on the same GPU, GPU 1 of node gpu1"),
                    mixed.error().message);
}

}  // namespace drk::runtime
