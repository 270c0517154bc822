// The floating-point modes a candidate could change for its whole thread, to run faster or to
// round differently than float32 arithmetic does: the rounding mode (<fenv.h>) and, on x86,
// MXCSR's flush-to-zero and denormals-are-zero bits and its own rounding field. The sandbox reads
// them around every request that runs candidate code (loading included: static initialisers)
// and puts the harness's back when they changed; the change is evidence (math_mode_changed).
// A candidate that changes and restores them within one call is not seen here. The CPU sandbox
// checks them; the CUDA sandbox does not yet (not run on a device so far).
//
// Thread-safety: the modes are per thread; these read and write the calling thread's.
#pragma once

#include <cstdint>
#include <string>

namespace drk::evaluator {

struct MathModes {
  int rounding = 0;    // fegetround()
  uint32_t mxcsr = 0;  // x86: MXCSR's FTZ, DAZ and rounding-control bits; 0 elsewhere

  bool operator==(const MathModes&) const = default;
};

MathModes read_math_modes();
void restore_math_modes(const MathModes& modes);

// "MXCSR flush-to-zero set, denormals-are-zero set, rounding toward zero", naming each change
// from `before` to `after`.
std::string describe_math_mode_change(const MathModes& before, const MathModes& after);

}  // namespace drk::evaluator
