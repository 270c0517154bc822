// Screener: the Oracle's decision, per arriving candidate, to measure it (send it to an
// Evaluator) or to screen it (answer with the cost model's predicted reward, unmeasured), and
// the online training of that model on every measured result (docs/cost-model.md).
//
// Why per candidate on arrival, against the running distribution of predictions, and not per
// (task, turn) group: the candidates of a group never arrive together. Turn t+1 of a trajectory
// is generated only after turn t's Feedback, Generators interleave their rollouts, and the
// Oracle dispatches each candidate the moment an Evaluator has credit. A Candidate does not
// carry its group's size either, so holding candidates back to rank a whole group would need a
// guess and would stall the Generators. Instead each task keeps its `window` most recent
// candidates (their features); an arriving candidate is predicted together with them under the
// current model, and ranked among them:
//   - measured when fewer than a `measure_top` share of the window is predicted better (mean);
//   - measured when fewer than an `explore` share of the window is more uncertain (stddev);
//   - screened otherwise.
// An equal prediction counts as half a better one (the mid-rank), so that copies of one schedule
// share the rank of their tie instead of each taking its top.
// So about measure_top + explore of the candidates are measured (less their overlap), the
// predicted best and the most uncertain, which is the rule "evaluate the top measure_top by mean
// plus explore by stddev" applied to a window that slides instead of a batch that never forms.
// Until the model has observed `warmup_samples` measured results, and while a task has fewer
// than kMinimumWindow earlier candidates to rank against, everything is measured; a candidate
// whose features cannot be built (it does not fit the schedule space) is measured too.
// A candidate id decided once is decided the same way again (a Generator's re-send of a
// measured candidate still in flight must not be screened): measured ids are remembered (the
// most recent kRememberedIds); a screened one is answered from the Oracle's completed answers.
//
// Thread-safety: none; owned by the Oracle's thread.
// Errors: screening_settings_from and create return invalid_argument naming the key and the
// range.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "actors/oracle/candidate_features.h"
#include "actors/oracle/cost_model.h"
#include "messages/drk.capnp.h"
#include "base/result.h"

namespace drk::oracle {

inline constexpr size_t kMinimumWindow = 4;
inline constexpr size_t kRememberedIds = 100000;

// experiment.oracle.screening
struct ScreeningSettings {
  bool enabled = false;
  double measure_top = 0.5;     // [0, 1]: the share measured for their predicted reward
  double explore = 0.1;         // [0, 1]: the share measured for their uncertainty
  uint32_t warmup_samples = 64; // measured results before anything is screened
  uint32_t window = 256;        // recent candidates per task an arrival is ranked among (>= 1)
  uint32_t train_steps = 4;     // Adam steps per member after each measured result
  uint64_t seed = 1;
};

Result<ScreeningSettings> screening_settings_from(const YAML::Node& experiment);

enum class ScreeningReason {
  warmup,          // measured: the model has not observed warmup_samples results yet
  unrankable,      // measured: too few earlier candidates of its task to rank against
  no_features,     // measured: the candidate does not fit the schedule space
  repeated,        // measured: a re-sent candidate that was measured before
  predicted_best,  // measured: in the top measure_top by predicted reward
  uncertain,       // measured: in the top explore by stddev
  screened,        // not measured: the prediction is its reward
};
std::string_view screening_reason_name(ScreeningReason reason);

struct ScreeningDecision {
  bool measure = true;
  ScreeningReason reason = ScreeningReason::warmup;
  std::optional<RewardPrediction> prediction;  // when the model was asked
};

class Screener {
 public:
  // `scales`: the tasks' sizes (the features' task part); a task absent from it has size 0.
  static Result<Screener> create(const ScreeningSettings& settings, TaskScales scales,
                                 const CostModelOptions& model_options = {});

  ScreeningDecision decide(msg::Candidate::Reader candidate);
  // A measured candidate's reward: into the model's buffer, then train_steps of training.
  void observe(msg::Candidate::Reader candidate, double reward);

  struct Counts {
    uint64_t measured = 0;
    uint64_t screened = 0;
  };
  Counts counts() const { return total_; }
  Counts counts_of_step(uint32_t step) const;

  const ScreeningSettings& settings() const { return settings_; }
  const CostModel& model() const { return model_; }

 private:
  Screener(const ScreeningSettings& settings, TaskScales scales, CostModel model);
  ScreeningDecision rank(const std::string& task, const std::vector<float>& features);
  void count(const std::string& id, uint32_t step, bool measured);

  ScreeningSettings settings_;
  TaskScales scales_;
  CostModel model_;
  std::map<std::string, std::deque<std::vector<float>>> windows_;  // per task, oldest first
  std::unordered_set<std::string> measured_ids_;
  std::deque<std::string> measured_order_;  // oldest first, to bound measured_ids_
  Counts total_;
  std::map<uint32_t, Counts> by_step_;
};

}  // namespace drk::oracle
