#include "runtime/supervision/peer_news.h"

#include <string>
#include <vector>

#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using Names = std::vector<std::string>;

const char* const kTwoNodes =
    "name: two\n"
    "network: {listen: 'tcp://127.0.0.1:7700'}\n"
    "nodes: [gpu1]\n"
    "actors:\n"
    "  - {role: learner}\n"
    "  - {role: oracle}\n"
    "  - {role: evaluator, count: 2, process: own, node: gpu1}\n"
    "  - {role: evaluator, count: 1, process: own}\n";

DRK_TEST_CASE("news of an actor goes to the actors of other roles, not to its replicas") {
  testing::RunDir dir;
  auto topology = load_topology(dir.write("two.yaml", kTwoNodes));
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(news_recipients(*topology, "evaluator.0") == Names{"learner", "oracle"});
  DRK_CHECK(news_recipients(*topology, "learner") == Names{"oracle", "evaluator.0", "evaluator.1", "evaluator.2"});
  // A lost node's news skips the actors on it.
  DRK_CHECK(news_recipients(*topology, "learner", "gpu1") == Names{"oracle", "evaluator.2"});
  // An actor the topology does not list (the built-in head actor): everyone is told.
  DRK_CHECK(news_recipients(*topology, "head").size() == 5);
}

}  // namespace
}  // namespace drk::runtime
