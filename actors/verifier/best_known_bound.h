// The best-known bound: a correct result whose speedup is far beyond the best verified one of its
// task so far (the Oracle sends it with the request) is timed a second time by the Evaluator, and
// with the out-of-bounds check; the Verifier rejects it (`implausible_speedup`) when the second
// timing falls to under half of the first, a speedup that does not hold. One that holds is a new
// best and passes. This works on every device, where the roofline bound (roofline_bound.h) needs
// a device's measured peaks.
//
// Why 3x: a step of the embedded policy rarely moves a task's best by more than that at once,
// and a first best (against nothing) is not checked, so honest progress costs at most a second
// timing now and then.
//
// Thread-safety: pure functions.
#pragma once

namespace drk::verifier {

inline constexpr double kFarBeyondBestKnown = 3.0;
inline constexpr double kHeldShare = 0.5;

// Whether a first timing's speedup is far enough beyond the best known one to be timed again.
inline bool far_beyond_best_known(double speedup, double best_known) {
  return best_known > 0 && speedup > kFarBeyondBestKnown * best_known;
}

// Whether the second timing kept the first's speedup (at least kHeldShare of it).
inline bool speedup_held(double first, double second) { return second >= kHeldShare * first; }

}  // namespace drk::verifier
