#include "runtime/topology/topology_validation.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/topology/experiment_device.h"
#include "runtime/topology/experiment_keys.h"
#include "runtime/topology/topology_experiment_check.h"
#include "runtime/topology/topology_validator.h"

namespace drk::runtime {
namespace {

// A true/false key of the supervision section; `example` is the value the error suggests.
void parse_flag(const YAML::Node& section, const char* key, const char* example, Validator& validator,
                bool& flag) {
  const YAML::Node value = section[key];
  if (!value.IsDefined()) return;
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  if (text == "true" || text == "false") {
    flag = text == "true";
  } else {
    validator.fail(value, std::string("supervision.") + key + " must be true or false, e.g. `" + key + ": " +
                              example + "`");
  }
}

void read_supervision(const YAML::Node& node, Validator& validator, SupervisionPolicy& policy) {
  if (!validator.map_field(node, "supervision", "supervision: {strategy: one_for_one}")) return;
  if (node.IsNull()) return;
  validator.check_keys(node, "supervision",
                       {"strategy", "max_restarts", "within_s", "backoff_initial_ms", "backoff_max_ms", "drain_ms",
                        "heartbeat_ms", "missed_heartbeats", "start_timeout_s", "hung_handler_s", "kill_hung",
                        "warm_spare", "trace"});
  if (const YAML::Node strategy = node["strategy"]; strategy.IsDefined()) {
    const std::string text = strategy.IsScalar() ? strategy.Scalar() : "";
    if (text == "one_for_one")
      policy.strategy = RestartStrategy::one_for_one;
    else if (text == "one_for_all")
      policy.strategy = RestartStrategy::one_for_all;
    else if (text == "rest_for_one")
      policy.strategy = RestartStrategy::rest_for_one;
    else
      validator.fail(strategy,
                     "supervision.strategy must be one_for_one, one_for_all or "
                     "rest_for_one, e.g. `strategy: one_for_one`");
  }
  if (const YAML::Node value = node["max_restarts"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.max_restarts", 0, "max_restarts: 10")) {
      policy.max_restarts = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["within_s"]; value.IsDefined()) {
    const auto seconds = parse_number(value);
    if (!seconds || *seconds <= 0) {
      validator.fail(value, "supervision.within_s must be a positive number of seconds, e.g. `within_s: 60`");
    } else {
      policy.within_s = *seconds;
    }
  }
  if (const YAML::Node value = node["backoff_initial_ms"]; value.IsDefined()) {
    if (auto n =
            validator.integer_field(value, "supervision.backoff_initial_ms", 0, "backoff_initial_ms: 0")) {
      policy.backoff_initial_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["backoff_max_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.backoff_max_ms", 0, "backoff_max_ms: 2000")) {
      policy.backoff_max_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["drain_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.drain_ms", 0, "drain_ms: 2000")) {
      policy.drain_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["heartbeat_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.heartbeat_ms", 1, "heartbeat_ms: 1000")) {
      policy.heartbeat_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["missed_heartbeats"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.missed_heartbeats", 1, "missed_heartbeats: 5")) {
      policy.missed_heartbeats = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["start_timeout_s"]; value.IsDefined()) {
    const auto seconds = parse_number(value);
    if (!seconds || *seconds <= 0) {
      validator.fail(value, "supervision.start_timeout_s must be a positive number of seconds, e.g. `start_timeout_s: 60`");
    } else {
      policy.start_timeout_s = *seconds;
    }
  }
  if (const YAML::Node value = node["hung_handler_s"]; value.IsDefined()) {
    const auto seconds = parse_number(value);
    if (!seconds || *seconds <= 0) {
      validator.fail(value,
                     "supervision.hung_handler_s must be a positive number of seconds, e.g. `hung_handler_s: 30`");
    } else {
      policy.hung_handler_s = *seconds;
    }
  }
  parse_flag(node, "kill_hung", "false", validator, policy.kill_hung);
  parse_flag(node, "warm_spare", "true", validator, policy.warm_spare);
  parse_flag(node, "trace", "true", validator, policy.trace);
}

bool is_tcp_endpoint_with_port(const std::string& text) {
  if (text.rfind("tcp://", 0) != 0) return false;
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon < 6) return false;
  const auto port = parse_integer(YAML::Node(text.substr(colon + 1)));
  return port && *port > 0 && *port < 65536;
}

void read_network(const YAML::Node& node, Validator& validator, NetworkSettings& network) {
  if (!validator.map_field(node, "network", "network: {listen: tcp://0.0.0.0:7700}") || node.IsNull()) return;
  validator.check_keys(node, "network", {"listen", "advertise", "heartbeat_ms", "node_timeout_ms", "keys"});
  network.enabled = true;
  const YAML::Node listen = node["listen"];
  if (!listen.IsDefined() || !listen.IsScalar() || !is_tcp_endpoint_with_port(listen.Scalar())) {
    validator.fail(listen.IsDefined() ? listen : node,
                   "network.listen must be a tcp endpoint with a port, where nodes join, e.g. "
                   "`listen: tcp://0.0.0.0:7700`");
  } else {
    network.listen = listen.Scalar();
  }
  if (const YAML::Node advertise = node["advertise"]; advertise.IsDefined()) {
    if (!advertise.IsScalar() || advertise.Scalar().empty() || advertise.Scalar().find(':') != std::string::npos) {
      validator.fail(advertise, "network.advertise must be a host name or address without a port, e.g. "
                                "`advertise: 10.0.0.1`");
    } else {
      network.advertise = advertise.Scalar();
    }
  }
  if (const YAML::Node value = node["heartbeat_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "network.heartbeat_ms", 1, "heartbeat_ms: 250"))
      network.heartbeat_ms = static_cast<int>(*n);
  }
  if (const YAML::Node value = node["node_timeout_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "network.node_timeout_ms", 1, "node_timeout_ms: 1500"))
      network.node_timeout_ms = static_cast<int>(*n);
  }
  if (network.node_timeout_ms < 2 * network.heartbeat_ms) {
    validator.fail(node, "network.node_timeout_ms (" + std::to_string(network.node_timeout_ms) +
                             ") must be at least twice network.heartbeat_ms (" +
                             std::to_string(network.heartbeat_ms) + "), or one late heartbeat loses a node");
  }
  if (const YAML::Node keys = node["keys"]; keys.IsDefined()) {
    if (!keys.IsScalar() || keys.Scalar().empty()) {
      validator.fail(keys, "network.keys must be a key directory (drk keys generate DIR head NODE...), e.g. "
                           "`keys: keys/`");
    } else {
      network.keys = keys.Scalar();
    }
  }
}

void read_nodes(const YAML::Node& list, Validator& validator, Topology& topology) {
  if (!list.IsSequence()) {
    validator.fail(list, "`nodes` must be a list of node names, e.g. `nodes: [gpu1, gpu2]`");
    return;
  }
  for (std::size_t position = 0; position < list.size(); ++position) {
    const auto name =
        validator.name_field(list[position], "nodes[" + std::to_string(position) + "]", "nodes: [gpu1]");
    if (!name) continue;
    if (*name == kHeadNode || std::find(topology.nodes.begin(), topology.nodes.end(), *name) != topology.nodes.end()) {
      validator.fail(list[position], "node '" + *name + "' is " +
                                         (*name == kHeadNode ? "the head's own node, which is implicit"
                                                             : "listed twice") +
                                         "; remove it");
      continue;
    }
    topology.nodes.push_back(*name);
  }
}

// Placement rules that span entries: known nodes, one node per process, the head on the head.
void check_placement(Validator& validator, const Topology& topology) {
  std::map<std::string, const ActorEntry*> process_node;
  for (const ActorEntry& actor : topology.actors) {
    if (actor.node != kHeadNode &&
        std::find(topology.nodes.begin(), topology.nodes.end(), actor.node) == topology.nodes.end()) {
      validator.fail_at(actor.where, "actor '" + actor.name + "' is placed on node '" + actor.node +
                             "', which `nodes:` does not list; add it, e.g. `nodes: [" + actor.node + "]`");
      continue;
    }
    if (actor.node != kHeadNode && !topology.network.enabled) {
      validator.fail_at(actor.where, "actor '" + actor.name + "' is on node '" + actor.node +
                             "': other nodes need a `network:` section, e.g. `network: {listen: "
                             "tcp://0.0.0.0:7700}`");
    }
    if (actor.process == kHeadProcess && actor.node != kHeadNode) {
      validator.fail_at(actor.where, "actor '" + actor.name + "' has `process: head` but `node: " +
                             actor.node + "`; the head process is on the head node");
    }
    auto [placed, added] = process_node.emplace(actor.process, &actor);
    if (!added && placed->second->node != actor.node) {
      validator.fail_at(actor.where, "process '" + actor.process + "' would span nodes '" +
                             placed->second->node + "' and '" + actor.node +
                             "'; a process lives on one node: give these actors different processes");
    }
    if (!added && placed->second->gpu != actor.gpu) {
      validator.fail_at(actor.where, "process '" + actor.process + "' would be pinned to GPUs " +
                                         std::to_string(placed->second->gpu) + " and " + std::to_string(actor.gpu) +
                                         "; a process sees one GPU: give these actors different processes");
    }
  }
}

// `gpus: [0, 1, 3]` (after `drk run` resolved `gpus: all`): the devices, one instance each; nullopt
// after an error. `path` is the entry's ("actors[2]").
std::optional<std::vector<int>> read_gpu_list(const YAML::Node& gpus, const std::string& path, bool on_cuda,
                                              Validator& validator) {
  if (!on_cuda) {
    validator.fail(gpus, path + ": `gpus:` places one process per GPU, but experiment.device is not cuda: set "
                                "`device: cuda`, or use `count: N` for Evaluators on the CPU");
    return std::nullopt;
  }
  if (gpus.IsScalar() && gpus.Scalar() == "all") {
    validator.fail(gpus, path + ": `gpus: all` is resolved from the machine's GPUs by `drk run`, which this "
                                "command is not: list them, e.g. `gpus: [0, 1]`");
    return std::nullopt;
  }
  if (!gpus.IsSequence() || gpus.size() == 0) {
    validator.fail(gpus, path + ".gpus must be `all` or a list of GPU indices, e.g. `gpus: [0, 1]`");
    return std::nullopt;
  }
  std::vector<int> devices;
  for (std::size_t position = 0; position < gpus.size(); ++position) {
    const auto device = parse_integer(gpus[position]);
    if (!device || *device < 0 || *device > 1'000'000) {
      validator.fail(gpus[position], path + ".gpus[" + std::to_string(position) +
                                         "] must be a non-negative GPU index, e.g. `gpus: [0, 1]`");
      return std::nullopt;
    }
    if (std::find(devices.begin(), devices.end(), *device) != devices.end()) {
      validator.fail(gpus[position], path + ".gpus lists GPU " + std::to_string(*device) +
                                         " twice; one Evaluator process per GPU: remove the repeat");
      return std::nullopt;
    }
    devices.push_back(static_cast<int>(*device));
  }
  return devices;
}

void read_actors(const YAML::Node& list, bool on_cuda, Validator& validator, Topology& topology) {
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    validator.fail(list, "`actors` must be a non-empty list, e.g. `actors: [{role: learner, process: own}]`");
    return;
  }
  std::map<std::string, uint32_t> next_index;
  std::set<std::string> names;
  struct FirstOfProcess {
    std::string name;
    ChildRestart restart;
    std::string where;
  };
  std::map<std::string, FirstOfProcess> process_restart;  // a process is restarted as a whole
  for (std::size_t position = 0; position < list.size(); ++position) {
    const YAML::Node entry = list[position];
    const std::string path = "actors[" + std::to_string(position) + "]";
    if (!entry.IsMap()) {
      validator.fail(entry, path + " must be a map, e.g. `- {role: evaluator, count: 2, process: own}`");
      continue;
    }
    validator.check_keys(entry, path,
                         {"role", "name", "count", "gpus", "process", "node", "gpu", "mailbox", "restart", "params"});
    const YAML::Node role_node = entry["role"];
    if (!role_node.IsDefined()) {
      validator.fail(entry, path + " needs a `role`, e.g. `role: evaluator`");
      continue;
    }
    const auto role = validator.name_field(role_node, path + ".role", "role: evaluator");
    std::optional<std::string> name;
    if (entry["name"].IsDefined())
      name = validator.name_field(entry["name"], path + ".name", "name: evaluator.gpu");
    std::optional<long long> count;
    if (entry["count"].IsDefined())
      count = validator.integer_field(entry["count"], path + ".count", 1, "count: 2");
    if (count && entry["name"].IsDefined()) {
      validator.fail(entry["name"], path +
                                        " has both `name` and `count`: instances of a count are "
                                        "named role.0, role.1, ...; drop one of them");
    }
    std::optional<std::vector<int>> gpus;
    if (const YAML::Node value = entry["gpus"]; value.IsDefined()) {
      for (const char* other : {"count", "gpu", "name"}) {
        if (entry[other].IsDefined()) {
          validator.fail(entry[other], path + " has both `gpus` and `" + other +
                                           "`: `gpus` places one instance per GPU, named role.0, role.1, ...; "
                                           "drop `" + other + "`");
        }
      }
      if (entry["process"].IsDefined() && !(entry["process"].IsScalar() && entry["process"].Scalar() == "own")) {
        validator.fail(entry["process"], path + ": `gpus` gives each instance a process of its own, pinned to "
                                                "its GPU; drop `process:` or say `process: own`");
      }
      gpus = read_gpu_list(value, path, on_cuda, validator);
      if (!gpus) continue;
    }
    std::string process = "own";
    if (entry["process"].IsDefined()) {
      if (auto given = validator.name_field(entry["process"], path + ".process", "process: own"))
        process = *given;
    }
    std::string node(kHeadNode);
    if (entry["node"].IsDefined()) {
      if (auto given = validator.name_field(entry["node"], path + ".node", "node: gpu1")) node = *given;
    }
    int gpu = -1;
    if (entry["gpu"].IsDefined()) {
      if (auto n = validator.integer_field(entry["gpu"], path + ".gpu", 0, "gpu: 0")) gpu = static_cast<int>(*n);
    }
    ChildRestart restart = ChildRestart::permanent;
    if (const YAML::Node value = entry["restart"]; value.IsDefined()) {
      const std::string text = value.IsScalar() ? value.Scalar() : "";
      if (text == "transient") {
        restart = ChildRestart::transient;
      } else if (text == "temporary") {
        restart = ChildRestart::temporary;
      } else if (text != "permanent") {
        validator.fail(value, path + ".restart must be permanent, transient or temporary, e.g. `restart: permanent`");
      }
    }
    std::size_t capacity = 1000;
    if (entry["mailbox"].IsDefined()) {
      if (auto n = validator.integer_field(entry["mailbox"], path + ".mailbox", 1, "mailbox: 1000")) {
        capacity = static_cast<std::size_t>(*n);
      }
    }
    YAML::Node params = entry["params"];
    if (params.IsDefined() && !validator.map_field(params, path + ".params", "params: {trials: 3}")) continue;
    if (!role) continue;

    const long long instances = gpus ? static_cast<long long>(gpus->size()) : count.value_or(1);
    for (long long k = 0; k < instances; ++k) {
      ActorEntry actor;
      actor.role = *role;
      actor.index = next_index[*role]++;
      actor.name = count || gpus ? *role + "." + std::to_string(actor.index) : name.value_or(*role);
      actor.process = process == "own" ? actor.name : process;
      actor.node = node;
      // `count` instances with a gpu get consecutive devices: one Evaluator process per GPU.
      actor.gpu = gpus ? (*gpus)[k] : gpu < 0 ? -1 : gpu + static_cast<int>(k);
      actor.restart = restart;
      actor.mailbox_capacity = capacity;
      actor.params = params.IsDefined() ? params : YAML::Node();
      actor.where = validator.where(entry);
      if (actor.name == kHeadActor) {
        validator.fail(entry, path + ": the name 'head' is the built-in progress actor's; choose another");
        break;
      }
      if (!names.insert(actor.name).second) {
        validator.fail(entry, path + ": an actor named '" + actor.name +
                                  "' already exists; give this one "
                                  "a distinct `name`");
        break;
      }
      if (actor.process == kHeadProcess && actor.restart != ChildRestart::permanent) {
        validator.fail(entry["restart"], path + ": actors in process head live as long as `drk run`; drop `restart: " +
                                             std::string(child_restart_name(actor.restart)) +
                                             "` or give the actor a process of its own");
        break;
      }
      const auto [first, inserted] =
          process_restart.emplace(actor.process, FirstOfProcess{actor.name, actor.restart, actor.where});
      if (!inserted && first->second.restart != actor.restart) {
        validator.fail(entry, path + ": process '" + actor.process + "' would have actors '" + first->second.name +
                                  "' (restart: " + std::string(child_restart_name(first->second.restart)) +
                                  ", " + first->second.where + ") and '" + actor.name + "' (restart: " +
                                  std::string(child_restart_name(actor.restart)) +
                                  "); a process is restarted as a whole: give them the same `restart` "
                                  "or different processes");
        break;
      }
      topology.actors.push_back(std::move(actor));
    }
  }
}

Result<Topology> validate_document(const YAML::Node& document, const Locator& locator) {
  Validator validator(locator);
  Topology topology;
  topology.resolved = document;
  if (!document.IsMap()) {
    validator.fail(document,
                   "a topology is a map with `name`, `run_dir` and `actors`, e.g. `name: quickstart`");
    return validator.finish(std::move(topology));
  }
  validator.check_keys(document, "",
                       {"name", "run_dir", "supervision", "network", "nodes", "actors", "experiment"});
  if (!document["name"].IsDefined()) {
    validator.fail(document, "the topology needs a `name`, e.g. `name: quickstart`");
  } else if (auto name = validator.name_field(document["name"], "name", "name: quickstart")) {
    topology.name = *name;
  }
  if (const YAML::Node run_dir = document["run_dir"]; run_dir.IsDefined()) {
    if (!run_dir.IsScalar() || run_dir.Scalar().empty()) {
      validator.fail(run_dir, "run_dir must be a directory path, e.g. `run_dir: runs/quickstart`");
    } else {
      topology.run_dir = run_dir.Scalar();
    }
  } else {
    topology.run_dir = "runs/" + topology.name;
  }
  if (document["supervision"].IsDefined())
    read_supervision(document["supervision"], validator, topology.supervision);
  if (document["network"].IsDefined()) read_network(document["network"], validator, topology.network);
  if (document["nodes"].IsDefined()) read_nodes(document["nodes"], validator, topology);
  read_actors(document["actors"], experiment_on_cuda(document["experiment"]), validator, topology);
  check_placement(validator, topology);
  topology.experiment = YAML::Node(YAML::NodeType::Map);
  if (const YAML::Node experiment = document["experiment"]; experiment.IsDefined()) {
    if (validator.map_field(experiment, "experiment", "experiment: {steps: 8}") && experiment.IsMap()) {
      topology.experiment = experiment;
    }
    if (experiment.IsMap()) {
      read_experiment(experiment, "", validator);
      // Values of the right kinds only: the roles' checks read them as such.
      if (!validator.failed()) check_experiment(experiment, validator);
    }
  }
  return validator.finish(std::move(topology));
}

}  // namespace

Result<Topology> validate_topology(const YAML::Node& document, const Locator& locator) {
  try {
    return validate_document(document, locator);
  } catch (const YAML::Exception& error) {
    // A shape the checks above did not foresee: still an input error, not a crash.
    return make_error(Errc::invalid_argument,
                      locator.where(document) + ": the topology has an unexpected shape: " + error.msg);
  }
}

}  // namespace drk::runtime
