// TurnOutcome: what one turn of a trajectory earned, as both Generators (embedded policy and
// language model) read it from the Oracle's Feedback and write it into the Trajectory's Turn.
// A screened candidate was not measured (docs/cost-model.md): its reward is the cost model's
// prediction, and only a correct kernel earns a reward above 0, so it counts as compiled and
// correct when that reward is. Coverage is the Verdict's GPU coverage (CUPTI: own kernels' share
// of GPU time) on CUDA; 1 on the CPU, where all measured time is the candidate's own.
// Thread-safety: pure functions.
#pragma once

#include "messages/drk.capnp.h"

namespace drk::generator {

struct TurnOutcome {
  double reward = 0.0;
  bool compiled = false;
  bool correct = false;
  bool honest = false;
  double speedup = 0.0;
  double coverage = 1.0;
  bool screened = false;  // answered by the Oracle's cost model, not measured
};

// A turn that was never evaluated (nothing to send): reward 0, no coverage on CUDA.
TurnOutcome unevaluated_outcome(bool cuda);

TurnOutcome turn_outcome(msg::Feedback::Reader feedback, bool cuda);

// Reward, correct, honest, speedup, coverage and screened of `turn`.
void write_outcome(const TurnOutcome& outcome, msg::Turn::Builder turn);

}  // namespace drk::generator
