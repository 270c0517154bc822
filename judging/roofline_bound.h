// The roofline bound of a CUDA result: no correct float32 kernel moves its task's minimum bytes
// much faster than the device's measured copy peak, nor does its FLOPs much faster than the
// measured FP32 FMA peak (TF32 or half-precision tensor cores would be a precision downgrade).
// A result beyond it skipped work, cached results, or timed something other than the work: the
// Evaluator times it a second time and runs compute-sanitizer on it, and the Verifier rejects it
// (`implausible_speedup`) when the second timing is still beyond.
//
// The measured peaks are not the hardware's ceiling (L2 hits after the flush, a kernel that
// beats the peak kernels a little), so the bound has margins: 1.5 for bytes, 1.25 for FLOPs.
//
// Thread-safety: pure functions.
#pragma once

#include "messages/drk.capnp.h"

namespace drk::judging {

inline constexpr double kRooflineBytesMargin = 1.5;
inline constexpr double kRooflineFlopsMargin = 1.25;

struct RooflinePosition {
  double bytes_fraction = 0;  // achieved / measured peak bytes per second; 0 when unknown
  double flops_fraction = 0;  // achieved / measured peak FLOP per second; 0 when unknown
  bool beyond = false;        // either fraction beyond its margin
};

// From result.gpu; all zero for a CPU result or one whose peaks were not measured.
RooflinePosition roofline_position(msg::EvalResult::Reader result);

}  // namespace drk::judging
