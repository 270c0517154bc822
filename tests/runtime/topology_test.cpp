#include "runtime/topology/topology.h"

#include <string>

#include "runtime/topology/experiment_keys.h"
#include "runtime/nodes/network_map.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using testing::RunDir;

const char* const kQuickstart =
    "name: quickstart\n"          // 1
    "run_dir: runs/quickstart\n"  // 2
    "supervision:\n"              // 3
    "  strategy: rest_for_one\n"  // 4
    "actors:\n"                   // 5
    "  - role: learner\n"         // 6
    "    process: head\n"         // 7
    "  - role: evaluator\n"       // 8
    "    count: 2\n"              // 9
    "    process: own\n"          // 10
    "    mailbox: 16\n"           // 11
    "    params: {trials: 5}\n"   // 12
    "  - role: verifier\n"        // 13
    "    process: checkers\n"     // 14
    "  - role: oracle\n"          // 15
    "    process: checkers\n"     // 16
    "experiment:\n"               // 17
    "  steps: 8\n";               // 18

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The experiment keys these tests set, registered by each test that sets one, as the drk tool's
// roles register theirs: a test must not depend on another having run first.
void register_test_experiment_keys() {
  register_experiment_keys({{"eval.trials", ValueKind::integer, "5"},
                            {"learning_rate", ValueKind::number, "0.05"},
                            {"tasks", ValueKind::text_or_list, "[relu]"}});
}

DRK_TEST_CASE("a topology expands counts and places actors in processes") {
  RunDir dir;
  auto topology = load_topology(dir.write("q.yaml", kQuickstart));
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(topology->name == "quickstart");
  DRK_CHECK(topology->supervision.strategy == RestartStrategy::rest_for_one);
  DRK_CHECK(topology->members("evaluator") == std::vector<std::string>{"evaluator.0", "evaluator.1"});
  DRK_CHECK(topology->find("evaluator.1")->index == 1);
  DRK_CHECK(topology->find("evaluator.1")->mailbox_capacity == 16);
  DRK_CHECK(topology->find("evaluator.1")->params["trials"].as<int>() == 5);
  DRK_CHECK(topology->child_processes() ==
            std::vector<std::string>{"evaluator.0", "evaluator.1", "checkers"});
  DRK_CHECK(topology->actors_of("checkers").size() == 2);
  DRK_CHECK(topology->process_of("learner") == std::optional<std::string>("head"));
  DRK_CHECK(topology->process_of("head") == std::optional<std::string>("head"));
  DRK_CHECK_FALSE(topology->process_of("nobody").has_value());
  DRK_CHECK(topology->experiment_steps() == 8);
}

DRK_TEST_CASE("a minimal topology gets the defaults") {
  RunDir dir;
  auto topology = load_topology(dir.write("m.yaml", "name: tiny\nactors: [{role: learner}]\n"));
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(topology->run_dir == "runs/tiny");
  DRK_CHECK(topology->experiment_steps() == 0);
  DRK_CHECK(topology->supervision.max_restarts == 10);
  DRK_CHECK(topology->supervision.trace);
  DRK_CHECK(topology->child_processes() == std::vector<std::string>{"learner"});
  auto scalar_experiment =
      load_topology(dir.write("s.yaml", "name: tiny\nactors: [{role: a}]\nexperiment: 3\n"));
  DRK_REQUIRE_FALSE(scalar_experiment.ok());
  DRK_CHECK(contains(scalar_experiment.error().message, "s.yaml:3: experiment must be a map"));
}

DRK_TEST_CASE("schema errors name the file, the line and the expected form") {
  RunDir dir;
  std::string text = kQuickstart;
  DRK_SUBCASE("a count that is not a positive integer") {
    text.replace(text.find("count: 2"), 8, "count: -1");
    auto topology = load_topology(dir.write("q.yaml", text));
    DRK_REQUIRE_FALSE(topology.ok());
    DRK_CHECK(topology.error().code == Errc::invalid_argument);
    DRK_CHECK_MESSAGE(
        contains(topology.error().message,
                 dir.file("q.yaml") + ":9: actors[1].count must be a positive integer, e.g. `count: 2`"),
        topology.error().message);
  }
  DRK_SUBCASE("an unknown key") {
    text.replace(text.find("mailbox: 16"), 11, "mailbx: 16");
    auto topology = load_topology(dir.write("q.yaml", text));
    DRK_REQUIRE_FALSE(topology.ok());
    DRK_CHECK_MESSAGE(contains(topology.error().message, ":11: unknown key `mailbx` in actors[1]"),
                      topology.error().message);
  }
  DRK_SUBCASE("a missing role") {
    text.replace(text.find("role: oracle"), 12, "name: oracle");
    auto topology = load_topology(dir.write("q.yaml", text));
    DRK_REQUIRE_FALSE(topology.ok());
    DRK_CHECK_MESSAGE(
        contains(topology.error().message, ":15: actors[3] needs a `role`, e.g. `role: evaluator`"),
        topology.error().message);
  }
  DRK_SUBCASE("a strategy that does not exist") {
    text.replace(text.find("rest_for_one"), 12, "one_for_some");
    auto topology = load_topology(dir.write("q.yaml", text));
    DRK_REQUIRE_FALSE(topology.ok());
    DRK_CHECK_MESSAGE(contains(topology.error().message, ":4: supervision.strategy must be one_for_one"),
                      topology.error().message);
  }
  DRK_SUBCASE("a trace switch that is not true or false") {
    auto topology = load_topology(dir.write("q.yaml", text), {"supervision.trace=sometimes"});
    DRK_REQUIRE_FALSE(topology.ok());
    DRK_CHECK_MESSAGE(contains(topology.error().message, "supervision.trace must be true or false, e.g. `trace: true`"),
                      topology.error().message);
    auto off = load_topology(dir.write("q.yaml", text), {"supervision.trace=false"});
    DRK_REQUIRE_MESSAGE(off.ok(), off.error().message);
    DRK_CHECK_FALSE(off->supervision.trace);
  }
  DRK_SUBCASE("YAML that does not parse") {
    auto topology = load_topology(dir.write("q.yaml", text + "  steps: [1, 2\n"));
    DRK_REQUIRE_FALSE(topology.ok());
    DRK_CHECK(topology.error().code == Errc::parse_error);
    DRK_CHECK(contains(topology.error().message, dir.file("q.yaml") + ":"));
  }
}

DRK_TEST_CASE("experiment keys nobody reads, and values of the wrong kind, are refused with their line") {
  register_test_experiment_keys();
  RunDir dir;
  auto good = load_topology(dir.write("g.yaml",
                                      "name: t\nactors: [{role: a}]\nexperiment:\n  steps: 2\n"
                                      "  eval: {trials: 3}\n  learning_rate: 1e-3\n  tasks: all\n"));
  DRK_REQUIRE_MESSAGE(good.ok(), good.error().message);
  auto bad = load_topology(dir.write("b.yaml",
                                     "name: t\nactors: [{role: a}]\nexperiment:\n  stepz: 2\n"
                                     "  eval: {trials: 3, budget: 1}\n  learning_rate: fast\n"
                                     "  tasks: {relu: 1}\n"));
  DRK_REQUIRE_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  DRK_CHECK(message.find("b.yaml:4: experiment.stepz is not a key anything reads; expected one of") !=
            std::string::npos);
  DRK_CHECK(message.find("b.yaml:5: experiment.eval.budget is not a key anything reads; expected one of trials") !=
            std::string::npos);
  DRK_CHECK(message.find("b.yaml:6: experiment.learning_rate must be a number") != std::string::npos);
  DRK_CHECK(message.find("b.yaml:7: experiment.tasks must be a value or a list of values") != std::string::npos);
  auto overridden = load_topology(dir.file("g.yaml"), {"experiment.eval.trials=many"});
  DRK_REQUIRE_FALSE(overridden.ok());
  DRK_CHECK(overridden.error().message.find("experiment.eval.trials must be a non-negative integer") !=
            std::string::npos);
}

DRK_TEST_CASE("--set overrides values, creates maps and addresses actors by role") {
  register_test_experiment_keys();
  RunDir dir;
  const std::string path = dir.write("q.yaml", kQuickstart);
  auto topology = load_topology(path, {"experiment.steps=3", "experiment.eval.trials=3",
                                       "actors.evaluator.count=3", "actors.verifier.params={strict: true}"});
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(topology->experiment_steps() == 3);
  DRK_CHECK(topology->experiment["eval"]["trials"].as<int>() == 3);
  DRK_CHECK(topology->members("evaluator").size() == 3);
  DRK_CHECK(topology->find("verifier")->params["strict"].as<bool>());

  auto bad = load_topology(path, {"actors.evaluator.count=zero"});
  DRK_REQUIRE_FALSE(bad.ok());
  DRK_CHECK_MESSAGE(
      contains(bad.error().message, "--set actors.evaluator.count=zero: actors[1].count must be"),
      bad.error().message);
  auto unknown = load_topology(path, {"actors.generator.count=2"});
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(contains(unknown.error().message, "no entry of `actors` has the name or role 'generator'"));
  auto malformed = load_topology(path, {"experiment.steps"});
  DRK_REQUIRE_FALSE(malformed.ok());
  DRK_CHECK(contains(malformed.error().message, "expected KEY=VALUE"));
}

DRK_TEST_CASE("extends merges the base under the file, and errors point into the right file") {
  register_test_experiment_keys();
  RunDir dir;
  dir.write("configs/base.yaml", kQuickstart);
  auto topology = load_topology(dir.write("configs/small.yaml",
                                          "extends: base.yaml\n"
                                          "name: small\n"
                                          "experiment: {eval: {trials: 1}}\n"));
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(topology->name == "small");
  DRK_CHECK(topology->experiment_steps() == 8);
  DRK_CHECK(topology->experiment["eval"]["trials"].as<int>() == 1);
  DRK_CHECK(topology->members("evaluator").size() == 2);

  std::string broken = kQuickstart;
  broken.replace(broken.find("mailbox: 16"), 11, "mailbox: lots");
  dir.write("configs/base.yaml", broken);
  auto failed = load_topology(dir.file("configs/small.yaml"));
  DRK_REQUIRE_FALSE(failed.ok());
  DRK_CHECK_MESSAGE(
      contains(failed.error().message, dir.file("configs/base.yaml") + ":11: actors[1].mailbox"),
      failed.error().message);
}

DRK_TEST_CASE("the resolved topology reads back the same") {
  RunDir dir;
  auto topology = load_topology(dir.write("q.yaml", kQuickstart), {"experiment.steps=2"});
  DRK_REQUIRE(topology.ok());
  DRK_REQUIRE(write_resolved_topology(*topology, dir.file("run"), dir.file("topology.yaml")).ok());
  auto again = load_topology(dir.file("topology.yaml"));
  DRK_REQUIRE_MESSAGE(again.ok(), again.error().message);
  DRK_CHECK(again->run_dir == dir.file("run"));
  DRK_CHECK(again->experiment_steps() == 2);
  DRK_CHECK(again->child_processes() == topology->child_processes());
}

}  // namespace

const char* const kTwoNodes =
    "name: two\n"                                                  // 1
    "network: {listen: 'tcp://127.0.0.1:7700', heartbeat_ms: 100}\n"  // 2
    "nodes: [gpu1]\n"                                              // 3
    "actors:\n"                                                    // 4
    "  - {role: learner, process: own}\n"                          // 5
    "  - {role: evaluator, count: 2, process: own, node: gpu1, gpu: 4}\n";  // 6

DRK_TEST_CASE("actors are placed on nodes, pinned to consecutive GPUs, and get tcp ports in a fixed order") {
  RunDir dir;
  auto topology = load_topology(dir.write("two.yaml", kTwoNodes));
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(topology->network.enabled);
  DRK_CHECK(topology->network.heartbeat_ms == 100);
  DRK_CHECK(topology->nodes == std::vector<std::string>{"gpu1"});
  DRK_CHECK(topology->find("evaluator.1")->node == "gpu1");
  DRK_CHECK(topology->find("evaluator.0")->gpu == 4);
  DRK_CHECK(topology->find("evaluator.1")->gpu == 5);
  DRK_CHECK(topology->child_processes_on("gpu1") == std::vector<std::string>{"evaluator.0", "evaluator.1"});
  DRK_CHECK(topology->child_processes_on("head") == std::vector<std::string>{"learner"});
  DRK_CHECK(topology->mailboxes_on("head") == std::vector<std::string>{"head", "learner"});
  NetworkMap map;
  map.nodes["head"] = NodeAddress{"10.0.0.1", "0.0.0.0", 7701, ""};
  map.nodes["gpu1"] = NodeAddress{"10.0.0.2", "0.0.0.0", 7800, ""};
  DRK_CHECK(*map.mailbox_endpoint(*topology, "evaluator.1", false) == "tcp://10.0.0.2:7801");
  DRK_CHECK(*map.mailbox_endpoint(*topology, "learner", true) == "tcp://0.0.0.0:7702");
  auto reread = parse_network_map(network_map_text(map), "test");
  DRK_REQUIRE(reread.ok());
  DRK_CHECK(reread->nodes == map.nodes);
}

DRK_TEST_CASE("placement errors name the entry: unknown node, no network, a process across nodes or GPUs") {
  RunDir dir;
  const auto error_of = [&](const std::string& text) {
    auto topology = load_topology(dir.write("bad.yaml", text));
    return topology.ok() ? std::string() : topology.error().message;
  };
  DRK_CHECK(contains(error_of("name: a\nactors:\n  - {role: learner, node: gpu9}\n"),
                     "bad.yaml:3: actor 'learner' is placed on node 'gpu9', which `nodes:` does not list"));
  DRK_CHECK(contains(error_of("name: a\nnodes: [b]\nactors:\n  - {role: learner, node: b}\n"),
                     "other nodes need a `network:` section"));
  DRK_CHECK(contains(error_of("name: a\nnetwork: {listen: 'tcp://127.0.0.1:1'}\nnodes: [b]\nactors:\n"
                              "  - {role: learner, process: p}\n  - {role: oracle, process: p, node: b}\n"),
                     "process 'p' would span nodes 'head' and 'b'"));
  DRK_CHECK(contains(error_of("name: a\nactors:\n  - {role: learner, process: p, gpu: 0}\n"
                              "  - {role: oracle, process: p, gpu: 1}\n"),
                     "process 'p' would be pinned to GPUs 0 and 1"));
  DRK_CHECK(contains(error_of("name: a\nnetwork: {listen: 'udp://x'}\nactors:\n  - {role: learner}\n"),
                     "bad.yaml:2: network.listen must be a tcp endpoint with a port"));
  DRK_CHECK(contains(error_of("name: a\nnetwork: {listen: 'tcp://127.0.0.1:1', heartbeat_ms: 500, "
                              "node_timeout_ms: 600}\nactors:\n  - {role: learner}\n"),
                     "at least twice network.heartbeat_ms"));
}

}  // namespace drk::runtime

namespace drk::runtime {
namespace {

// A machine with `count` GPUs and no CUDA_VISIBLE_DEVICES; a count that fails is a machine
// without a GPU.
VisibleGpusQuery machine_with(Result<int> count) {
  register_experiment_keys({{"device", ValueKind::text, "cpu", {"cpu", "cuda"}}});
  return [count] { return visible_gpus(std::nullopt, [count] { return count; }); };
}

std::string two_evaluators_on(const std::string& gpus, const std::string& device = "cuda",
                              const std::string& extra = "") {
  return "name: g\n"                                                  // 1
         "actors:\n"                                                  // 2
         "  - {role: learner, process: own}\n"                        // 3
         "  - {role: evaluator, gpus: " + gpus + extra + "}\n"        // 4
         "experiment: {device: " + device + "}\n";                    // 5
}

}  // namespace

DRK_TEST_CASE("gpus: all places one Evaluator per visible GPU, each in its own pinned process, in the resolved file") {
  RunDir dir;
  auto topology = load_topology(dir.write("g.yaml", two_evaluators_on("all")), {}, machine_with(2));
  DRK_REQUIRE_MESSAGE(topology.ok(), topology.error().message);
  DRK_CHECK(topology->members("evaluator") == std::vector<std::string>{"evaluator.0", "evaluator.1"});
  DRK_CHECK(topology->find("evaluator.0")->gpu == 0);
  DRK_CHECK(topology->find("evaluator.1")->gpu == 1);
  DRK_CHECK(topology->child_processes() == std::vector<std::string>{"learner", "evaluator.0", "evaluator.1"});
  // RUN_DIR/topology.yaml holds the expansion: its readers (each drk host) need no GPU query.
  DRK_REQUIRE(write_resolved_topology(*topology, dir.file("run"), dir.file("topology.yaml")).ok());
  DRK_CHECK(contains(dir.read("topology.yaml"), "gpus: [0, 1]"));
  auto again = load_topology(dir.file("topology.yaml"));
  DRK_REQUIRE_MESSAGE(again.ok(), again.error().message);
  DRK_CHECK(again->find("evaluator.1")->gpu == 1);
}

DRK_TEST_CASE("gpus: a list pins one instance to each GPU named; CUDA_VISIBLE_DEVICES says which are visible") {
  RunDir dir;
  auto listed = load_topology(dir.write("g.yaml", two_evaluators_on("[0, 1, 3]")), {}, machine_with(4));
  DRK_REQUIRE_MESSAGE(listed.ok(), listed.error().message);
  DRK_CHECK(listed->members("evaluator").size() == 3);
  DRK_CHECK(listed->find("evaluator.2")->gpu == 3);

  auto shown = visible_gpus(std::string("2,3"), [] { return Result<int>(8); });
  DRK_REQUIRE(shown.ok());
  DRK_CHECK(shown->devices == std::vector<int>{2, 3});
  auto from_variable = load_topology(dir.write("g.yaml", two_evaluators_on("all")), {}, [] {
    return visible_gpus(std::string("2,3"), [] { return Result<int>(8); });
  });
  DRK_REQUIRE_MESSAGE(from_variable.ok(), from_variable.error().message);
  DRK_CHECK(from_variable->find("evaluator.0")->gpu == 2);
  DRK_CHECK(from_variable->find("evaluator.1")->gpu == 3);
  DRK_CHECK(visible_gpus(std::string(""), {})->devices.empty());
  DRK_CHECK(visible_gpus(std::string("1,-1,2"), {})->devices == std::vector<int>{1});
  auto by_uuid = visible_gpus(std::string("GPU-8f2a"), {});
  DRK_REQUIRE_FALSE(by_uuid.ok());
  DRK_CHECK(contains(by_uuid.error().message, "CUDA_VISIBLE_DEVICES=GPU-8f2a names device 'GPU-8f2a'"));
}

DRK_TEST_CASE("gpus: errors name the entry and the fix") {
  RunDir dir;
  const auto error_of = [&](const std::string& text, const VisibleGpusQuery& machine) {
    auto topology = load_topology(dir.write("bad.yaml", text), {}, machine);
    return topology.ok() ? std::string() : topology.error().message;
  };
  const std::string no_gpu = error_of(two_evaluators_on("all"), machine_with(make_error(Errc::unsupported, "no driver")));
  DRK_CHECK_MESSAGE(contains(no_gpu, "bad.yaml:4: actors[1]: `gpus: all` finds no GPU on this machine (no CUDA device "
                                     "(no driver)): use `count: N` with `device: cpu`"), no_gpu);
  DRK_CHECK(contains(error_of(two_evaluators_on("all"), machine_with(0)), "finds no GPU on this machine (0 CUDA devices)"));
  DRK_CHECK(contains(error_of(two_evaluators_on("all", "cpu"), machine_with(2)),
                     "bad.yaml:4: actors[1]: `gpus:` places one process per GPU, but experiment.device is not cuda"));
  DRK_CHECK(contains(error_of(two_evaluators_on("[0, 1, 0]"), machine_with(2)),
                     "bad.yaml:4: actors[1].gpus lists GPU 0 twice"));
  DRK_CHECK(contains(error_of(two_evaluators_on("[0, -1]"), machine_with(2)),
                     "bad.yaml:4: actors[1].gpus[1] must be a non-negative GPU index"));
  DRK_CHECK(contains(error_of(two_evaluators_on("[0, 2]"), machine_with(2)),
                     "bad.yaml:4: actors[1].gpus names GPU 2, which this machine does not show (2 CUDA devices: [0, 1])"));
  DRK_CHECK(contains(error_of(two_evaluators_on("all", "cuda", ", count: 2"), machine_with(2)),
                     "actors[1] has both `gpus` and `count`"));
  DRK_CHECK(contains(error_of(two_evaluators_on("[0]", "cuda", ", process: shared"), machine_with(2)),
                     "actors[1]: `gpus` gives each instance a process of its own"));
  DRK_CHECK(contains(error_of(two_evaluators_on("all"), {}),
                     "bad.yaml:4: actors[1]: `gpus: all` is resolved from the machine's GPUs by `drk run`"));
  DRK_CHECK(contains(error_of("name: g\nnetwork: {listen: 'tcp://127.0.0.1:7700'}\nnodes: [gpu1]\nactors:\n"
                              "  - {role: evaluator, node: gpu1, gpus: all}\nexperiment: {device: cuda}\n",
                              machine_with(2)),
                     "bad.yaml:5: actors[0]: `gpus: all` on node 'gpu1' cannot be resolved at the head"));
}

}  // namespace drk::runtime
