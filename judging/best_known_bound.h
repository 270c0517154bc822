// The best-known bound: a correct result whose speedup is far beyond the best verified one of its
// task so far (the Oracle sends it with the request) is timed a second time by the Evaluator, and
// with the out-of-bounds check; the Verifier rejects it (`implausible_speedup`) when the
// candidate's own median more than doubles in the second timing (its work was not done in the
// first); where that median is not known, when the second speedup falls under half of the first.
// One that holds is a new best and passes, at its second timing's speedup. This works on every
// device, where the roofline bound (roofline_bound.h) needs a device's measured peaks.
//
// Why 3x: a step of the embedded policy rarely moves a task's best by more than that at once,
// and a first best (against nothing) is not checked, so honest progress costs at most a second
// timing now and then.
//
// Thread-safety: pure functions.
#pragma once

namespace drk::judging {

inline constexpr double kFarBeyondBestKnown = 3.0;
inline constexpr double kHeldShare = 0.5;

// Whether a first timing's speedup is far enough beyond the best known one to be timed again.
inline bool far_beyond_best_known(double speedup, double best_known) {
  return best_known > 0 && speedup > kFarBeyondBestKnown * best_known;
}

// Whether the second timing kept the first's speedup (at least kHeldShare of it).
inline bool speedup_held(double first, double second) { return second >= kHeldShare * first; }

// Whether the candidate's own median held in the second timing (within 1 / kHeldShare of the
// first's): what a memo that misses in the second changes, and a reference that happened to be
// slow in the first (a loaded machine, a short timing budget) does not.
inline bool candidate_time_held(double first_us, double second_us) { return second_us * kHeldShare <= first_us; }

}  // namespace drk::judging
