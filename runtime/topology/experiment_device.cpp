#include "runtime/topology/experiment_device.h"

namespace drk::runtime {

bool experiment_on_cuda(const YAML::Node& experiment) {
  // A const node's missing key is invalid: IsDefined() first, or reading its type throws.
  if (!experiment.IsDefined() || !experiment.IsMap()) return false;
  const YAML::Node device = experiment["device"];
  return device.IsDefined() && device.IsScalar() && device.Scalar() == "cuda";
}

}  // namespace drk::runtime
