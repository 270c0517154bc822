// Topology: which actors run, in which processes, under which supervision, with which
// experiment, as read from YAML.
//
// load_topology() reads a file, follows `extends: base.yaml` (relative to the file; the base is
// deep-merged under the file: maps merge key by key, anything else is replaced), applies
// `--set key=value` overrides and validates the result before anything starts. An override's
// key is a dotted path over maps (`experiment.eval.trials`); inside `actors` a segment names an
// entry by its `name` or `role` (`actors.evaluator.count`). The value is parsed as YAML, so
// numbers, lists and maps work.
//
// Errors are Errc::parse_error (YAML syntax) or Errc::invalid_argument (schema), each naming the
// place and the expected form:
//   "configs/q.yaml:12: actors[2].count must be a positive integer, e.g. `count: 2`"
//
// Processes: an actor's `process` is "head" (inside `drk run`), "own" (the actor gets a process
// of its own, named after the actor) or any other name (actors sharing it share a process).
// Nodes: every actor lives on a node, `head` (the machine of `drk run`) unless its entry says
// `node: NAME` for a node of the `nodes:` list, which joins with `drk node --join`. Actors on
// other nodes need a `network:` section (where the head listens for nodes; docs/topology.md).
// A process lives on one node: the actors that share a process name share its node.
// GPUs: `gpu: K` pins an entry's process to GPU K (CUDA_VISIBLE_DEVICES=K; with `count: N`, K ..
// K+N-1); `gpus: [0, 1, 3]` places one instance per listed GPU, each in a process of its own
// pinned to it, and `gpus: all` one per GPU this machine shows, resolved at load (gpu_placement.h).
//
// Thread-safety: a Topology is an immutable value after loading; its YAML nodes must not be
// read from several threads at once (hand each thread a YAML::Clone).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "runtime/topology/visible_gpus.h"

namespace drk::runtime {

// The process that `drk run` itself is, and the name of the built-in actor it hosts.
inline constexpr std::string_view kHeadProcess = "head";
inline constexpr std::string_view kHeadActor = "head";

enum class RestartStrategy { one_for_one, one_for_all, rest_for_one };

// Whether a child process is restarted when it ends (Erlang/OTP's child types; supervisor.h):
// permanent always; transient only after an abnormal end (a signal, a non-zero exit code, a
// kill by the supervisor: missed heartbeats, a hung handler), an exit with code 0 meaning it is
// done; temporary never.
enum class ChildRestart { permanent, transient, temporary };

inline std::string_view child_restart_name(ChildRestart restart) {
  switch (restart) {
    case ChildRestart::transient: return "transient";
    case ChildRestart::temporary: return "temporary";
    case ChildRestart::permanent: break;
  }
  return "permanent";
}

struct SupervisionPolicy {
  RestartStrategy strategy = RestartStrategy::one_for_one;
  int max_restarts = 10;  // at most this many restarts ...
  double within_s = 60;   // ... in this many seconds, else the run stops
  int backoff_initial_ms = 0;
  int backoff_max_ms = 2000;
  int drain_ms = 2000;          // after SIGTERM, a host handles what its mailboxes hold this long
  int heartbeat_ms = 1000;      // every host reports to the head this often ...
  int missed_heartbeats = 5;    // ... and a child silent for this many periods is killed
  double start_timeout_s = 60;  // a started process must report (heartbeat) within this
  double hung_handler_s = 30;   // a handler running this long is reported (hung?) ...
  bool kill_hung = false;       // ... and, when true, its process is killed and restarted
  bool warm_spare = true;       // keep one child loaded ahead, so restarts skip program load
  bool trace = true;            // every process records handler and work spans (docs/traces.md)
};

// The head node's name: the machine `drk run` runs on.
inline constexpr std::string_view kHeadNode = "head";

// Multi-node settings (`network:`); absent: every actor is on the head node.
struct NetworkSettings {
  bool enabled = false;
  std::string listen;        // tcp://HOST:PORT where the head accepts nodes
  std::string advertise;     // the host other nodes reach the head's mailboxes at
  int heartbeat_ms = 250;    // node <-> head heartbeats
  int node_timeout_ms = 1500;  // a node silent this long is lost
  std::string keys;          // CURVE key directory (docs/security.md); empty: no encryption
};

// One actor instance (an entry with `count: N` gives N instances).
struct ActorEntry {
  std::string name;  // unique: "evaluator.1", "learner"
  std::string role;
  uint32_t index = 0;   // position within the role's pool
  std::string process;  // resolved: "head", the actor's name for "own", or the group name
  std::string node = std::string(kHeadNode);
  int gpu = -1;         // the CUDA device the actor's process is pinned to; -1: none
  ChildRestart restart = ChildRestart::permanent;  // the same for every actor of a process
  std::size_t mailbox_capacity = 1000;
  YAML::Node params;  // may be null
  std::string where;  // "configs/q.yaml:12", for messages about this entry
};

struct Topology {
  std::string name;
  std::string run_dir;  // as written (relative to the current directory) or absolute
  SupervisionPolicy supervision;
  NetworkSettings network;
  std::vector<std::string> nodes;  // declared nodes, head excluded, in order
  std::vector<ActorEntry> actors;
  YAML::Node experiment;  // a map (empty when absent)
  YAML::Node resolved;    // the whole document after extends and overrides

  // The processes `drk run` starts, in topology order ("head" excluded).
  std::vector<std::string> child_processes() const;
  // The child processes placed on one node, in topology order.
  std::vector<std::string> child_processes_on(std::string_view node) const;
  // The node an actor lives on (the built-in head actor's is head); empty when unknown.
  std::optional<std::string> node_of(std::string_view actor) const;
  // The actors of a node that have a mailbox there, in a fixed order (on the head node the
  // built-in head actor first): the order of their tcp ports (network_address.h).
  std::vector<std::string> mailboxes_on(std::string_view node) const;
  // The actors of one process, in topology order.
  std::vector<const ActorEntry*> actors_of(std::string_view process) const;
  // The actor called `name`; nullptr when there is none.
  const ActorEntry* find(std::string_view name) const;
  // The process an actor lives in, including the built-in head actor; empty when unknown.
  std::optional<std::string> process_of(std::string_view actor) const;
  // The names of every actor of a role, in index order.
  std::vector<std::string> members(std::string_view role) const;
  // experiment.steps, 0 when absent.
  uint32_t experiment_steps() const;
};

// Reads, merges, overrides and validates. `overrides` are "key=value" strings. With
// `visible_gpus` (the head of a run: `drk run`), `gpus: all` on the head node becomes this
// machine's GPUs and `gpus:` lists are checked against them (gpu_placement.h); without it
// (a process reading RUN_DIR/topology.yaml, which holds the lists already), `gpus: all` is an
// error and lists are taken as written.
Result<Topology> load_topology(const std::string& path, const std::vector<std::string>& overrides = {},
                               const VisibleGpusQuery& visible_gpus = {});

// Validates an already merged document (the resolved form a child reads).
Result<Topology> parse_topology(const YAML::Node& document, const std::string& source);

// Writes the resolved document with `run_dir` replaced by `absolute_run_dir`.
Status write_resolved_topology(const Topology& topology, const std::string& absolute_run_dir,
                               const std::string& path);

}  // namespace drk::runtime
