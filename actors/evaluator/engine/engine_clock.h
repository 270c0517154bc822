// The clock of the engine's phases and timing: steady, this process's.
#pragma once

#include <chrono>

namespace drk::evaluator {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

inline double ns_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::nano>(to - from).count();
}

}  // namespace drk::evaluator
