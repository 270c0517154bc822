// The step's batch: the turns of a step's trajectories as tensors per family, and the rows of
// them that enter the loss. A turn the policy cannot read (unknown family, wrong observation or
// action sizes) carries no gradient; of the others, MRS judges each trajectory, then the
// advantage, staleness and PRS each turn. Every turn is marked in its trajectory: rejectedBy
// with the reason, or trained; and learnerLogprobs, the policy's log-probabilities before the
// update (the previous policy of the trust region).
//
// Thread-safety: none; the Learner's thread. Errors: none: a turn that does not fit is a marked
// turn. Ownership: the trajectories stay the caller's; the tensors are the batch's own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "actors/learner/learner_settings.h"
#include "kernels/schedule/policy.h"
#include "messages/drk.capnp.h"

namespace drk::learner {

// Why a turn stayed out of the loss (Turn.rejectedBy).
inline constexpr const char* kNoAdvantage = "no_advantage";
inline constexpr const char* kMalformed = "malformed";
inline constexpr const char* kPrs = "prs";
inline constexpr const char* kMrsBand = "mrs_band";
inline constexpr const char* kMrsVeto = "mrs_veto";
inline constexpr const char* kStale = "stale";
inline constexpr const char* kRollback = "rollback";

// A trajectory of the step, by its id, open for marking its turns.
struct StepTrajectory {
  std::string id;
  msg::Trajectory::Builder trajectory;
};

// A value per (trajectory id, turn counted from 1): the Oracle's advantages (a turn without
// one is not trained), or returns.
using TurnValues = std::map<std::pair<std::string, uint32_t>, double>;

// The rows of one family that enter the loss.
struct FamilyTensors {
  schedule::Family family;
  torch::Tensor observations, actions, old_logprobs, advantages, later_turn;
  torch::Tensor learner_logprobs;  // before the update: the previous policy of the trust region
};

// What the selection rejected, for the StepReport.
struct SelectionCounts {
  uint32_t prs_rejected = 0, mrs_rejected = 0, mrs_vetoed = 0, stale_rejected = 0;
};

// The batch of `trajectories` under `policy` (whose parameters are read, not changed) at policy
// version `version`; families without a trained row are left out.
std::vector<FamilyTensors> step_batch(std::vector<StepTrajectory>& trajectories, const TurnValues& advantages,
                                      schedule::Policy& policy, const Settings& settings, uint32_t version,
                                      SelectionCounts& counts);

}  // namespace drk::learner
