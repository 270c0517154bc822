// `gpu: K` under an outer CUDA_VISIBLE_DEVICES (Slurm's): the K-th device the process may see.
#include "runtime/gpu_pinning.h"

#include "tests/doctest_drk.h"

using drk::runtime::pinned_device;

DRK_TEST_CASE("gpu: K is device K, or the K-th device an outer CUDA_VISIBLE_DEVICES allows") {
  DRK_CHECK(pinned_device(1, nullptr) == "1");
  DRK_CHECK(pinned_device(1, "") == "1");
  DRK_CHECK(pinned_device(0, "4,6") == "4");
  DRK_CHECK(pinned_device(1, "4,6") == "6");
  DRK_CHECK(pinned_device(0, "GPU-5f0a,GPU-77c1") == "GPU-5f0a");
  DRK_CHECK(pinned_device(2, "4,6") == "");
}
