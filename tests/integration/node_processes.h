// What the multi-node tests share: free ports, keys, the head's and a node's command lines, and
// reading a live run through inspection.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/nodes/curve_keys.h"
#include "runtime/inspection/inspection_server.h"
#include "tests/doctest_drk.h"
#include "tests/support/process_table.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"
#include "tools/bench/free_port.h"

namespace drk::testing::nodes {

struct Ports {
  int head = 0;  // network.listen; the head's mailboxes follow it
  int node = 0;  // the node's first mailbox port
};

// The head's 12 ports, then the node's 12 (checked now; taken later by the run).
inline Ports pick_ports() {
  const auto base = bench::free_tcp_ports(24);
  DRK_REQUIRE_MESSAGE(base.ok(), base.error().message);
  Ports ports;
  ports.head = *base;
  ports.node = ports.head + 12;
  return ports;
}

// `drk keys generate DIR/keys NAME...`
inline void generate_keys(const RunDir& dir, const std::vector<std::string>& names) {
  std::vector<std::string> argv{DRK_BINARY, "keys", "generate", dir.file("keys")};
  argv.insert(argv.end(), names.begin(), names.end());
  SpawnedProgram keys(argv, dir.file("keys.txt"));
  keys.wait_for(30'000);
}

inline std::vector<std::string> head_command(const RunDir& dir, const Ports& ports, int steps, bool curve,
                                             const std::string& topology = "multinode.yaml",
                                             const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> argv{DRK_BINARY,
                                "run",
                                std::string(DRK_SOURCE_DIR) + "/tests/integration/" + topology,
                                "--fresh",
                                "--set",
                                "run_dir=" + dir.file("run"),
                                "--set",
                                "experiment.steps=" + std::to_string(steps),
                                "--set",
                                "network.listen=tcp://127.0.0.1:" + std::to_string(ports.head)};
  if (curve) {
    argv.push_back("--set");
    argv.push_back("network.keys=" + dir.file("keys"));
  }
  for (const std::string& override_text : overrides) {
    argv.push_back("--set");
    argv.push_back(override_text);
  }
  return argv;
}

inline std::vector<std::string> node_command(const RunDir& dir, const Ports& ports, const std::string& name,
                                             bool curve, const std::string& head_host = "127.0.0.1",
                                             const std::string& advertise = "127.0.0.1") {
  std::vector<std::string> argv{DRK_BINARY,  "node",     "--join", "tcp://" + head_host + ":" + std::to_string(ports.head),
                                "--name",    name,       "--port", std::to_string(ports.node),
                                "--advertise", advertise, "--run-dir", dir.file("node")};
  if (curve) {
    argv.push_back("--keys");
    argv.push_back(dir.file("keys"));
  }
  return argv;
}

// Messages an actor has handled, as the live run's inspection shows it; 0 when unknown.
inline uint64_t evaluated_by(const std::string& run_dir, const std::string& actor) {
  auto endpoint = runtime::resolve_inspect_address(run_dir);
  if (!endpoint) return 0;
  runtime::InspectionClient client(*endpoint);
  auto view = client.fetch(std::chrono::milliseconds(2000));
  if (!view) return 0;
  for (const auto& seen : view->actors) {
    if (seen.name == actor) return seen.messages_handled;
  }
  return 0;
}

// Peers the head refused, asked at its node endpoint with the `ops` identity of DIR/keys.
inline uint64_t refused_peers(const RunDir& dir, const Ports& ports) {
  auto own = runtime::read_key_pair(dir.file("keys"), "ops");
  auto head = runtime::read_public_key(dir.file("keys"), "head");
  if (!own || !head) return 0;
  runtime::InspectionClient client("tcp://127.0.0.1:" + std::to_string(ports.head),
                                   runtime::CurveClientKeys{*own, *head});
  auto view = client.fetch(std::chrono::milliseconds(1000));
  return view ? view->refused_peers : 0;
}

// `drk node` (pid) and the hosts it started for the node run directory `node_run_dir`.
inline std::vector<pid_t> processes_of_node(pid_t node_pid, const std::string& node_run_dir) {
  std::vector<pid_t> pids{node_pid};
  for (pid_t host : processes_where([&](const std::vector<std::string>& argv) {
         return argv.size() > 1 && argv[1] == "host" && has_option(argv, "--run-dir", node_run_dir);
       })) {
    pids.push_back(host);
  }
  return pids;
}

}  // namespace drk::testing::nodes
