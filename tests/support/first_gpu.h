// The first GPU for a GPU-only test, or why there is none: the test then says it is skipped, as
// a doctest message and as a "SKIPPED (no GPU): reason" line that tools/scripts/gpu-check.sh
// reads, and returns; the binary then exits with the status CTest reads as skipped
// (device_skip.h).
//
// Thread-safety: call from the test's thread.
#pragma once

#include <cstdio>
#include <optional>

#include "actors/evaluator/cuda/cuda_device.h"
#include "tests/doctest_drk.h"
#include "tests/support/device_skip.h"

namespace drk::testing {

inline std::optional<evaluator::cuda::DeviceInfo> first_gpu_or_skip() {
  auto device = evaluator::cuda::query_device(0);
  if (device) return *device;
  DRK_MESSAGE("skipped: " << device.error().message);
  std::printf("SKIPPED (no GPU): %s\n", device.error().message.c_str());
  skipped_for_missing_device() = true;
  return std::nullopt;
}

}  // namespace drk::testing
