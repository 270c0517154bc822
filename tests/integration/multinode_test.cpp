// Multi-node runs with real processes and tcp sockets on this machine: `drk run` as the head and
// `drk node` as node `b` (tests/integration/multinode.yaml), with CURVE keys; a node that goes
// silent (its processes stopped with SIGSTOP, as a cut link looks to the head) is detected, its
// work moves to the head's Evaluator, and it rejoins; a node whose key the head does not allow is
// refused. tests/integration/netns_test.cpp cuts a real link between network namespaces.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/integration/node_processes.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::RunDir;
using drk::testing::SpawnedProgram;
using namespace drk::testing::nodes;

constexpr int kRunTimeoutMs = 240'000;

}  // namespace

DRK_TEST_CASE("a node joins over CURVE, hosts an Evaluator, and the run completes") {
  RunDir dir;
  const Ports ports = pick_ports();
  generate_keys(dir, {"head", "b", "ops"});
  SpawnedProgram head(head_command(dir, ports, 2, true), dir.file("head.txt"));
  SpawnedProgram node(node_command(dir, ports, "b", true), dir.file("node.txt"));
  uint64_t handled_on_node = 0;  // by evaluator.1, read live: inspection ends with the run
  for (int waited = 0; !head.wait_for(200) && waited < kRunTimeoutMs; waited += 200) {
    handled_on_node = std::max(handled_on_node, evaluated_by(dir.file("run"), "evaluator.1"));
  }
  const bool ended = head.wait_for(0);
  const std::string output = dir.read("head.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output << "\nnode:\n" << dir.read("node.txt"));
  DRK_CHECK_MESSAGE(head.exit_code() == 0, output << "\nnode:\n" << dir.read("node.txt"));
  DRK_CHECK(output.find("every node has joined") != std::string::npos);
  DRK_CHECK(output.find("step 2/2") != std::string::npos);
  // The node hosted evaluator.1, which evaluated candidates, and ended with the run.
  DRK_CHECK_MESSAGE(node.wait_for(20'000), dir.read("node.txt"));
  DRK_CHECK_MESSAGE(node.exit_code() == 0, dir.read("node.txt"));
  DRK_CHECK(dir.read("node.txt").find("the run is over") != std::string::npos);
  DRK_CHECK(handled_on_node > 0);
}

DRK_TEST_CASE("a silent node is lost, its work moves, and it rejoins (how fast: drk bench runtime)") {
  RunDir dir;
  const Ports ports = pick_ports();
  SpawnedProgram head(head_command(dir, ports, 3, false), dir.file("head.txt"));
  SpawnedProgram node(node_command(dir, ports, "b", false), dir.file("node.txt"));
  // Wait until evaluator.1 (on the node) has done some work.
  for (int waited = 0; evaluated_by(dir.file("run"), "evaluator.1") == 0; waited += 100) {
    DRK_REQUIRE_MESSAGE((head.running() && waited < kRunTimeoutMs), dir.read("head.txt") << dir.read("node.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::vector<pid_t> stopped = processes_of_node(node.pid(), dir.file("node"));
  DRK_REQUIRE(stopped.size() >= 2);  // drk node and its evaluator.1 host
  const auto cut = std::chrono::steady_clock::now();
  for (pid_t pid : stopped) ::kill(pid, SIGSTOP);
  for (int waited = 0; dir.read("head.txt").find("node b lost") == std::string::npos; waited += 20) {
    DRK_REQUIRE_MESSAGE(waited < 30'000, dir.read("head.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double detected_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
  DRK_MESSAGE("node loss detected after " << detected_s << " s (node_timeout_ms 800)");
  // The head's Evaluator takes the work while the node is away.
  const auto before = evaluated_by(dir.file("run"), "evaluator.0");
  for (int waited = 0; evaluated_by(dir.file("run"), "evaluator.0") == before; waited += 100) {
    DRK_REQUIRE_MESSAGE(waited < 60'000, dir.read("head.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (pid_t pid : stopped) ::kill(pid, SIGCONT);
  const bool ended = head.wait_for(kRunTimeoutMs);
  const std::string output = dir.read("head.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output);
  DRK_CHECK_MESSAGE(head.exit_code() == 0, output << "\nnode:\n" << dir.read("node.txt"));
  DRK_CHECK(output.find("node b is back") != std::string::npos);
  DRK_CHECK(output.find("step 3/3") != std::string::npos);
  DRK_CHECK(node.wait_for(20'000));
}

DRK_TEST_CASE("a wedged process on a node misses its heartbeats there, and its node kills and restarts it") {
  RunDir dir;
  const Ports ports = pick_ports();
  SpawnedProgram head(head_command(dir, ports, 3, false, "multinode.yaml",
                                   {"supervision.heartbeat_ms=200", "supervision.missed_heartbeats=3"}),
                      dir.file("head.txt"));
  SpawnedProgram node(node_command(dir, ports, "b", false), dir.file("node.txt"));
  for (int waited = 0; evaluated_by(dir.file("run"), "evaluator.1") == 0; waited += 100) {
    DRK_REQUIRE_MESSAGE((head.running() && waited < kRunTimeoutMs), dir.read("head.txt") << dir.read("node.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Only evaluator.1's host: the node itself keeps answering the head, so only its own health
  // checks can see the process is wedged.
  const std::vector<pid_t> wedged = drk::testing::processes_where([&](const std::vector<std::string>& argv) {
    return argv.size() > 1 && argv[1] == "host" && drk::testing::has_option(argv, "--run-dir", dir.file("node")) &&
           drk::testing::has_option(argv, "--process", "evaluator.1");
  });
  DRK_REQUIRE(wedged.size() == 1);
  ::kill(wedged.front(), SIGSTOP);
  for (int waited = 0; dir.read("node.txt").find("missed 3 heartbeats") == std::string::npos; waited += 50) {
    DRK_REQUIRE_MESSAGE(waited < 30'000, dir.read("node.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool ended = head.wait_for(kRunTimeoutMs);
  const std::string output = dir.read("head.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output << "\nnode:\n" << dir.read("node.txt"));
  DRK_CHECK_MESSAGE(head.exit_code() == 0, output << "\nnode:\n" << dir.read("node.txt"));
  DRK_CHECK(output.find("step 3/3") != std::string::npos);
  // The node's own supervisor restarted it (the head may also have lost the node for a moment
  // on a loaded machine: its 800 ms timeout is not what this test is about).
  DRK_CHECK(dir.read("node.txt").find("missed 3 heartbeats") != std::string::npos);
  DRK_CHECK(dir.read("node.txt").find("; restarting") != std::string::npos);
  DRK_CHECK(node.wait_for(20'000));
}

DRK_TEST_CASE("a node whose key the head does not allow is refused and the head keeps waiting") {
  RunDir dir;
  const Ports ports = pick_ports();
  generate_keys(dir, {"head", "b", "ops"});
  // An intruder: its own key pair under the name b, not the one the head allows.
  RunDir intruder;
  generate_keys(intruder, {"b"});
  std::filesystem::copy_file(dir.file("keys/head.pub"), intruder.file("keys/head.pub"));
  SpawnedProgram head(head_command(dir, ports, 1, true), dir.file("head.txt"));
  std::vector<std::string> command = node_command(dir, ports, "b", true);
  for (auto& arg : command) {
    if (arg == dir.file("keys")) arg = intruder.file("keys");
  }
  SpawnedProgram node(command, dir.file("node.txt"));
  for (int waited = 0; refused_peers(dir, ports) == 0; waited += 100) {
    DRK_REQUIRE_MESSAGE(waited < 30'000, dir.read("head.txt") << dir.read("node.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  DRK_CHECK(dir.read("head.txt").find("every node has joined") == std::string::npos);
  DRK_CHECK(head.running());
  // The node says why it cannot join, and ends.
  DRK_CHECK(node.wait_for(10'000));
  DRK_CHECK(node.exit_code() == 1);
  DRK_CHECK_MESSAGE(dir.read("node.txt").find("its key is not allowed there") != std::string::npos,
                    dir.read("node.txt"));
  ::kill(head.pid(), SIGINT);
  DRK_CHECK(head.wait_for(20'000));
  DRK_CHECK(head.exit_code() == 130);
}
