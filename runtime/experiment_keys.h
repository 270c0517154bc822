// The keys of a topology's `experiment:` section that some part of the system reads, with the
// kind of value each takes. Roles register theirs (tools/drk/roles.cpp) before a topology is
// loaded; load_topology() then refuses, with the file and line, a key nobody reads (a typo
// that would otherwise be ignored silently) or a value of the wrong kind, before anything
// starts. `steps` is the runtime's own (the head shows "step 3/8").
//
// Thread-safety: register from one thread before any topology is loaded; read afterwards.
#pragma once

#include <string>
#include <vector>

namespace drk::runtime {

enum class ValueKind {
  integer,       // a non-negative whole number
  number,        // any number
  text,          // a scalar
  text_or_list,  // a scalar or a list of scalars
};

struct ExperimentKey {
  std::string path;     // dotted below `experiment`, e.g. "eval.trials"
  ValueKind kind;
  std::string example;  // the value as a person would write it, e.g. "5"
};

// Registering the same path twice with the same kind is harmless.
void register_experiment_keys(const std::vector<ExperimentKey>& keys);
std::vector<ExperimentKey> registered_experiment_keys();  // sorted by path

}  // namespace drk::runtime
