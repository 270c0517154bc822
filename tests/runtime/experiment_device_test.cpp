// experiment_on_cuda: only the scalar `cuda` is, read without adding keys to the node.
#include "runtime/topology/experiment_device.h"

#include "tests/doctest_drk.h"

namespace drk::runtime {

DRK_TEST_CASE("an experiment is on cuda only when its device is the scalar cuda") {
  DRK_CHECK(experiment_on_cuda(YAML::Load("{device: cuda, steps: 2}")));
  DRK_CHECK_FALSE(experiment_on_cuda(YAML::Load("{device: cpu}")));
  DRK_CHECK_FALSE(experiment_on_cuda(YAML::Load("{steps: 2}")));
  DRK_CHECK_FALSE(experiment_on_cuda(YAML::Load("{device: [cuda]}")));
  DRK_CHECK_FALSE(experiment_on_cuda(YAML::Load("[device, cuda]")));
  DRK_CHECK_FALSE(experiment_on_cuda(YAML::Node()));
  const YAML::Node absent = YAML::Load("{steps: 2}");
  DRK_CHECK_FALSE(experiment_on_cuda(absent["experiment"]));
  DRK_CHECK(absent.size() == 1);
}

}  // namespace drk::runtime
