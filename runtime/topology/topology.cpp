#include "runtime/topology/topology.h"

#include <algorithm>
#include <fstream>

#include "runtime/topology/gpu_placement.h"
#include "runtime/topology/topology_loading.h"
#include "runtime/topology/topology_locator.h"
#include "runtime/topology/topology_validation.h"
#include "runtime/topology/topology_validator.h"

namespace drk::runtime {

std::vector<std::string> Topology::child_processes() const {
  std::vector<std::string> processes;
  for (const auto& actor : actors) {
    if (actor.process == kHeadProcess) continue;
    if (std::find(processes.begin(), processes.end(), actor.process) == processes.end()) {
      processes.push_back(actor.process);
    }
  }
  return processes;
}

std::vector<std::string> Topology::child_processes_on(std::string_view node) const {
  std::vector<std::string> processes;
  for (const std::string& process : child_processes()) {
    if (node_of(actors_of(process).front()->name) == node) processes.push_back(process);
  }
  return processes;
}

std::optional<std::string> Topology::node_of(std::string_view actor_name) const {
  if (actor_name == kHeadActor) return std::string(kHeadNode);
  if (const ActorEntry* actor = find(actor_name)) return actor->node;
  return std::nullopt;
}

std::vector<std::string> Topology::mailboxes_on(std::string_view node) const {
  std::vector<std::string> names;
  if (node == kHeadNode) names.emplace_back(kHeadActor);
  for (const ActorEntry& actor : actors) {
    if (actor.node == node) names.push_back(actor.name);
  }
  return names;
}

std::vector<const ActorEntry*> Topology::actors_of(std::string_view process) const {
  std::vector<const ActorEntry*> found;
  for (const auto& actor : actors) {
    if (actor.process == process) found.push_back(&actor);
  }
  return found;
}

const ActorEntry* Topology::find(std::string_view actor_name) const {
  for (const auto& actor : actors) {
    if (actor.name == actor_name) return &actor;
  }
  return nullptr;
}

std::optional<std::string> Topology::process_of(std::string_view actor_name) const {
  if (actor_name == kHeadActor) return std::string(kHeadProcess);
  if (const ActorEntry* actor = find(actor_name)) return actor->process;
  return std::nullopt;
}

std::vector<std::string> Topology::members(std::string_view role) const {
  std::vector<std::string> names;
  for (const auto& actor : actors) {
    if (actor.role == role) names.push_back(actor.name);
  }
  return names;
}

uint32_t Topology::experiment_steps() const {
  const auto steps = parse_integer(experiment["steps"]);
  return steps && *steps > 0 ? static_cast<uint32_t>(*steps) : 0;
}

Result<Topology> load_topology(const std::string& path, const std::vector<std::string>& overrides,
                               const VisibleGpusQuery& visible_gpus) {
  Locator locator;
  auto document = load_with_extends(path, locator, 0);
  if (!document) return document.error();
  for (const auto& text : overrides) {
    if (auto applied = apply_override(*document, text, locator); !applied) return applied.error();
  }
  if (auto placed = place_on_visible_gpus(*document, locator, visible_gpus); !placed) return placed.error();
  return validate_topology(*document, locator);
}

Result<Topology> parse_topology(const YAML::Node& document, const std::string& source) {
  Locator locator;
  locator.add_file(source, document);
  return validate_topology(document, locator);
}

Status write_resolved_topology(const Topology& topology, const std::string& absolute_run_dir,
                               const std::string& path) {
  YAML::Node resolved = YAML::Clone(topology.resolved);
  resolved["run_dir"] = absolute_run_dir;
  YAML::Emitter emitter;
  emitter << resolved;
  std::ofstream out(path, std::ios::trunc);
  out << "# The topology of this run after `extends` and `--set` (written by drk run).\n"
      << emitter.c_str() << "\n";
  out.close();
  if (!out) {
    return make_error(Errc::io_error, "cannot write the resolved topology to '" + path +
                                          "': check that the run directory is writable");
  }
  return {};
}

}  // namespace drk::runtime
