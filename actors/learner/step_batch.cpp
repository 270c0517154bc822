#include "actors/learner/step_batch.h"

#include <algorithm>

#include "actors/learner/rejection_sampling.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy_network.h"

namespace drk::learner {
namespace {

using schedule::Family;

// Where a row of a FamilyBatch comes from.
struct RowSource {
  size_t rollout = 0;
  unsigned turn = 0;  // index into the trajectory's turns
};

// The well-formed turns of one family, as tensors for the update.
struct FamilyBatch {
  std::vector<float> observations;
  std::vector<int64_t> actions;
  std::vector<float> old_logprobs;
  std::vector<float> advantages;
  std::vector<uint8_t> later_turn;
  std::vector<RowSource> sources;
  std::vector<int64_t> trained_rows;  // the rows that enter the loss
  int64_t rows = 0;
};

// One FamilyTensors per family with rows, with the policy's log-probabilities before the update.
std::vector<FamilyTensors> make_tensors(std::map<Family, FamilyBatch>& batches, schedule::Policy& policy) {
  std::vector<FamilyTensors> tensors;
  const int64_t observation_size = schedule::observation_size(policy.device());
  torch::NoGradGuard no_grad;
  for (auto& [family, batch] : batches) {
    if (batch.rows == 0) continue;
    const auto knob_count = static_cast<int64_t>(schedule::knobs(family, policy.device()).size());
    FamilyTensors t{
        family,
        torch::from_blob(batch.observations.data(), {batch.rows, observation_size}, torch::kFloat32).clone(),
        torch::from_blob(batch.actions.data(), {batch.rows, knob_count}, torch::kInt64).clone(),
        torch::from_blob(batch.old_logprobs.data(), {batch.rows, knob_count}, torch::kFloat32).clone(),
        torch::from_blob(batch.advantages.data(), {batch.rows}, torch::kFloat32).clone(),
        torch::from_blob(batch.later_turn.data(), {batch.rows}, torch::kUInt8).to(torch::kBool),
        {}};
    t.learner_logprobs = policy.network().log_probs(family, t.observations, t.actions, t.later_turn).detach();
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// MRS per trajectory, then PRS per turn; marks each turn and keeps only the trained rows of
// `tensors`.
void select_rows(std::vector<StepTrajectory>& trajectories, std::map<Family, FamilyBatch>& batches,
                 std::vector<FamilyTensors>& tensors, const TurnValues& advantages, const Settings& settings,
                 uint32_t version, SelectionCounts& counts) {
  std::vector<std::vector<double>> log_ratios(trajectories.size());
  size_t tensor_index = 0;
  for (auto& [family, batch] : batches) {
    if (batch.rows == 0) continue;
    auto& t = tensors[tensor_index++];
    const auto learner = t.learner_logprobs.contiguous();
    const auto behaviour = t.old_logprobs.contiguous();
    const auto knob_count = learner.size(1);
    const float* learner_data = learner.data_ptr<float>();
    const float* behaviour_data = behaviour.data_ptr<float>();
    for (int64_t row = 0; row < batch.rows; ++row) {
      const auto& source = batch.sources[static_cast<size_t>(row)];
      auto turn = trajectories[source.rollout].trajectory.getTurns()[source.turn];
      auto logprobs = turn.initLearnerLogprobs(static_cast<unsigned>(knob_count));
      for (int64_t knob = 0; knob < knob_count; ++knob) {
        const float value = learner_data[row * knob_count + knob];
        logprobs.set(static_cast<unsigned>(knob), value);
        log_ratios[source.rollout].push_back(static_cast<double>(value) - behaviour_data[row * knob_count + knob]);
      }
    }
  }
  std::vector<MrsOutcome> mrs(trajectories.size());
  for (size_t index = 0; index < trajectories.size(); ++index) mrs[index] = mrs_check(settings.mrs, log_ratios[index]);
  tensor_index = 0;
  for (auto& [family, batch] : batches) {
    if (batch.rows == 0) continue;
    auto& t = tensors[tensor_index++];
    for (int64_t row = 0; row < batch.rows; ++row) {
      const auto& source = batch.sources[static_cast<size_t>(row)];
      auto& rollout = trajectories[source.rollout];
      auto turn = rollout.trajectory.getTurns()[source.turn];
      const char* rejected = nullptr;
      // PRS judges a measured profile. A screened turn (the cost model's answer) has none, its
      // coverage reads 0: PRS leaves it to the update as it leaves an incorrect turn.
      const bool prs_judges_as_correct = turn.getCorrect() && !turn.getScreened();
      const uint32_t played_by = rollout.trajectory.getPolicyVersion();
      if (advantages.count({rollout.id, source.turn + 1}) == 0) {
        rejected = kNoAdvantage;
      } else if (played_by + settings.max_staleness < version) {
        rejected = kStale;
        ++counts.stale_rejected;
      } else if (mrs[source.rollout] == MrsOutcome::vetoed) {
        rejected = kMrsVeto;
        ++counts.mrs_rejected;
        ++counts.mrs_vetoed;
      } else if (mrs[source.rollout] == MrsOutcome::outside_band) {
        rejected = kMrsBand;
        ++counts.mrs_rejected;
      } else if (!prs_keeps(settings.prs, prs_judges_as_correct, turn.getCoverage(),
                            prs_uniform_draw(settings.seed, turn.getCandidateId().cStr()))) {
        rejected = kPrs;
        ++counts.prs_rejected;
      }
      if (rejected) {
        turn.setRejectedBy(rejected);
        continue;
      }
      turn.setTrained(true);
      batch.trained_rows.push_back(row);
    }
    const auto rows = torch::tensor(batch.trained_rows, torch::kInt64);
    t.observations = t.observations.index_select(0, rows);
    t.actions = t.actions.index_select(0, rows);
    t.old_logprobs = t.old_logprobs.index_select(0, rows);
    t.advantages = t.advantages.index_select(0, rows);
    t.later_turn = t.later_turn.index_select(0, rows);
    t.learner_logprobs = t.learner_logprobs.index_select(0, rows);
  }
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                               [](const FamilyTensors& t) { return t.observations.size(0) == 0; }),
                tensors.end());
}

}  // namespace

std::vector<FamilyTensors> step_batch(std::vector<StepTrajectory>& trajectories, const TurnValues& advantages,
                                      schedule::Policy& policy, const Settings& settings, uint32_t version,
                                      SelectionCounts& counts) {
  std::map<Family, FamilyBatch> batches;
  const int observation_size = schedule::observation_size(policy.device());
  for (size_t rollout_index = 0; rollout_index < trajectories.size(); ++rollout_index) {
    auto& rollout = trajectories[rollout_index];
    auto turns = rollout.trajectory.getTurns();
    uint32_t turn_number = 0;
    for (auto turn : turns.asReader()) {
      ++turn_number;
      const auto advantage = advantages.find({rollout.id, turn_number});
      auto family = schedule::parse_family(turn.getFamily().cStr());
      // Turns with a malformed shape carry no gradient; those without an advantage (filtered
      // by the Oracle) are kept for the MRS ratio of their trajectory, but not trained.
      if (!family) {
        turns[turn_number - 1].setRejectedBy(kMalformed);
        continue;
      }
      const size_t knob_count = schedule::knobs(*family, policy.device()).size();
      if (turn.getObservation().size() != static_cast<unsigned>(observation_size) ||
          turn.getActions().size() != knob_count || turn.getActionLogprobs().size() != knob_count) {
        turns[turn_number - 1].setRejectedBy(kMalformed);
        continue;
      }
      FamilyBatch& batch = batches[*family];
      for (float value : turn.getObservation()) batch.observations.push_back(value);
      for (size_t knob = 0; knob < knob_count; ++knob) {
        const uint16_t action = turn.getActions()[static_cast<unsigned>(knob)];
        if (action > schedule::keep_decision(*family, policy.device(), static_cast<int>(knob))) continue;
        batch.actions.push_back(action);
        batch.old_logprobs.push_back(turn.getActionLogprobs()[static_cast<unsigned>(knob)]);
      }
      if (batch.actions.size() != static_cast<size_t>(batch.rows + 1) * knob_count) {
        batch.observations.resize(static_cast<size_t>(batch.rows) * observation_size);
        batch.actions.resize(static_cast<size_t>(batch.rows) * knob_count);
        batch.old_logprobs.resize(static_cast<size_t>(batch.rows) * knob_count);
        turns[turn_number - 1].setRejectedBy(kMalformed);
        continue;
      }
      batch.advantages.push_back(advantage == advantages.end() ? 0.0f : static_cast<float>(advantage->second));
      batch.later_turn.push_back(turn_number > 1 ? 1 : 0);
      batch.sources.push_back({rollout_index, turn_number - 1});
      ++batch.rows;
    }
  }
  auto tensors = make_tensors(batches, policy);
  select_rows(trajectories, batches, tensors, advantages, settings, version, counts);
  return tensors;
}

}  // namespace drk::learner
