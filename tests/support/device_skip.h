// Whether a test of this binary was skipped because the device it needs is missing, and the exit
// status that then tells CTest so (the gpu-labelled tests' SKIP_RETURN_CODE, cmake/DrkTargets.cmake):
// a binary whose GPU tests could not run is reported skipped, not passed.
//
// Thread-safety: set and read from the tests' thread.
#pragma once

namespace drk::testing {

inline constexpr int kSkippedReturnCode = 77;

inline bool& skipped_for_missing_device() {
  static bool skipped = false;
  return skipped;
}

}  // namespace drk::testing
