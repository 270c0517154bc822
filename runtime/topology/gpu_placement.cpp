#include "runtime/topology/gpu_placement.h"

#include <algorithm>
#include <optional>
#include <string>

#include "runtime/topology/experiment_device.h"
#include "runtime/topology/topology.h"
#include "runtime/topology/topology_validator.h"

namespace drk::runtime {
namespace {

std::string device_list(const std::vector<int>& devices) {
  std::string text;
  for (const int device : devices) text += (text.empty() ? "" : ", ") + std::to_string(device);
  return "[" + text + "]";
}

}  // namespace

Status place_on_visible_gpus(YAML::Node document, const Locator& locator, const VisibleGpusQuery& visible) {
  const YAML::Node& read = document;  // reads through const nodes add no keys
  const YAML::Node actors = read["actors"];
  if (!visible || !experiment_on_cuda(read["experiment"]) || !actors.IsDefined() || !actors.IsSequence()) return {};
  Validator validator(locator);
  std::optional<Result<VisibleGpus>> machine;  // asked once, when first needed
  for (std::size_t position = 0; position < actors.size(); ++position) {
    const YAML::Node entry = actors[position];
    if (!entry.IsMap() || !entry["gpus"].IsDefined()) continue;
    const std::string path = "actors[" + std::to_string(position) + "]";
    const YAML::Node node = entry["node"];
    const std::string node_name = node.IsDefined() && node.IsScalar() ? node.Scalar() : std::string(kHeadNode);
    const YAML::Node gpus = entry["gpus"];
    const bool all = gpus.IsScalar() && gpus.Scalar() == "all";
    if (node_name != kHeadNode) {
      if (all) {
        validator.fail(gpus, path + ": `gpus: all` on node '" + node_name +
                                 "' cannot be resolved at the head (the node's GPUs are not known before it "
                                 "starts them): list them, e.g. `gpus: [0, 1]`");
      }
      continue;
    }
    if (!machine) machine = visible();
    if (!*machine) {
      validator.fail(gpus, path + ": " + machine->error().message);
      continue;
    }
    const VisibleGpus& shown = **machine;
    if (all) {
      if (shown.devices.empty()) {
        validator.fail(gpus, path + ": `gpus: all` finds no GPU on this machine (" + shown.source +
                                 "): use `count: N` with `device: cpu`, or run where a GPU is visible");
        continue;
      }
      YAML::Node listed(YAML::NodeType::Sequence);
      listed.SetStyle(YAML::EmitterStyle::Flow);
      for (const int device : shown.devices) listed.push_back(device);
      YAML::Node placed = document["actors"][position];
      placed["gpus"] = listed;
      continue;
    }
    if (!gpus.IsSequence()) continue;  // the schema's check names the form
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const auto device = parse_integer(gpus[k]);
      if (!device || *device < 0) continue;  // the schema's check says so
      if (std::find(shown.devices.begin(), shown.devices.end(), *device) == shown.devices.end()) {
        validator.fail(gpus[k], path + ".gpus names GPU " + std::to_string(*device) +
                                    ", which this machine does not show (" + shown.source + ": " +
                                    device_list(shown.devices) + "): list visible ones, or `gpus: all`");
      }
    }
  }
  if (!validator.failed()) return {};
  return validator.finish(Topology{}).error();
}

}  // namespace drk::runtime
