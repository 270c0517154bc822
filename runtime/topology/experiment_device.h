// Whether a topology's experiment runs on CUDA (`experiment.device: cuda`), read from its YAML
// before or after it is validated: GPU placement, the one-Evaluator-per-GPU check and the
// actors' `gpus:` all depend on it. Anything but the scalar `cuda` (absent, `cpu`, a map) is not.
//
// Thread-safety: a pure function; reads the node through a const reference, adding no keys.
// Errors: none.
#pragma once

#include <yaml-cpp/yaml.h>

namespace drk::runtime {

bool experiment_on_cuda(const YAML::Node& experiment);

}  // namespace drk::runtime
