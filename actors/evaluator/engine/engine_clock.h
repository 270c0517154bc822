// The clock of the engine's phases and timing: steady, this process's.
#pragma once

#include <chrono>

namespace drk::evaluator {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace drk::evaluator
