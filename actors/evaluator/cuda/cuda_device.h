// The CUDA device as the Evaluator sees it: whether one is usable, and its properties.
// Uses the CUDA runtime, which loads the driver lazily: on a machine without a GPU or driver
// every call returns Errc::unsupported with the reason, never crashes.
//
// Thread-safety: any thread (the CUDA runtime is thread-safe).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace drk::evaluator::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  int64_t global_memory_bytes = 0;
  int64_t l2_cache_bytes = 0;
  int64_t persisting_l2_max_bytes = 0;
  std::string architecture() const {
    return "sm_" + std::to_string(compute_major) + std::to_string(compute_minor);
  }
};

// Errc::unsupported when no device is usable (the message says why: no driver, no device).
Result<DeviceInfo> query_device(int ordinal = 0);

}  // namespace drk::evaluator::cuda
