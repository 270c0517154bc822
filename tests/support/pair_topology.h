// pair_in_one_process(): a topology of two actors named after their roles, both in process "p"
// (inproc between them), for tests that host them in one ActorHost.
#pragma once

#include <string>

#include "runtime/topology/topology.h"

namespace drk::testing {

inline runtime::Topology pair_in_one_process(const std::string& name, const char* first, const char* second) {
  runtime::Topology topology;
  topology.name = name;
  for (const char* actor : {first, second}) {
    runtime::ActorEntry entry;
    entry.name = actor;
    entry.role = actor;
    entry.process = "p";
    topology.actors.push_back(entry);
  }
  return topology;
}

}  // namespace drk::testing
