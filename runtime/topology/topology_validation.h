// The schema of a topology document: its name, run directory, supervision, network, nodes,
// actors (roles, processes, placement) and experiment, with every error at its file and line.
//
// Thread-safety: a free function. Errors: invalid_argument, one line per error found.
#pragma once

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "runtime/topology/topology.h"
#include "runtime/topology/topology_locator.h"

namespace drk::runtime {

// The Topology `document` describes, or every error in it.
Result<Topology> validate_topology(const YAML::Node& document, const Locator& locator);

}  // namespace drk::runtime
