#include "actors/oracle/oracle_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include "training/training_stages.h"
#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/oracle/advantage.h"
#include "actors/oracle/evaluation_queue.h"
#include "actors/oracle/reward.h"
#include "actors/oracle/screening.h"
#include "judging/feedback_report.h"
#include "kernels/catalog/task.h"
#include "kernels/compile/compiled_artifact.h"
#include "runtime/log.h"
#include "training/candidate_trace.h"

namespace drk::oracle {
namespace {

constexpr uint64_t kExpiryTimer = 1;
constexpr std::chrono::milliseconds kExpiryPeriod{1000};
// More than can be in flight to the Archivist at any moment (its mailbox holds 1000 at most,
// but it writes each in well under a millisecond).
constexpr size_t kRecordsResentToArchivist = 256;

// The tasks' sizes for the cost model's features, from the catalog the Learner reads
// (experiment.tasks_dir). Screening is an optimisation: without a catalog the sizes are 0.
TaskScales task_scales(const YAML::Node& experiment) {
  std::string directory = kernels::TaskCatalog::default_directory();
  if (experiment && experiment.IsMap() && experiment["tasks_dir"]) {
    directory = experiment["tasks_dir"].as<std::string>();
  }
  auto catalog = kernels::TaskCatalog::load(directory);
  if (!catalog) {
    log::warn() << "oracle: the cost model goes without task sizes: " << catalog.error().describe();
    return {};
  }
  TaskScales scales;
  auto add_scales = [&](const kernels::Task& task) {
    for (const auto device : {kernels::DeviceKind::cpu, kernels::DeviceKind::cuda}) {
      scales[task.name][device == kernels::DeviceKind::cuda ? 1 : 0] =
          TaskScale{kernels::estimate_flops(task, device), kernels::estimate_min_bytes(task, device)};
    }
  };
  for (const auto& task : catalog->tasks()) add_scales(task);
  for (const auto& variant : catalog->variants()) add_scales(variant);
  return scales;
}

// What the Oracle reads of an experiment that can be wrong: its training stages with their
// reward weights, and the screening settings.
struct OracleSettings {
  std::vector<training::TrainingStage> stages;
  std::vector<RewardWeights> weights;  // one per stage
  ScreeningSettings screening;
};

Result<OracleSettings> read_oracle_settings(const YAML::Node& experiment) {
  OracleSettings settings;
  auto stages = training::read_training_stages(experiment);
  if (!stages) return stages.error();
  settings.stages = std::move(*stages);
  for (const auto& stage : settings.stages) {
    auto weights = reward_weights_from(stage.experiment);
    if (!weights) return weights.error();
    settings.weights.push_back(*weights);
  }
  auto screening = screening_settings_from(experiment);
  if (!screening) return screening.error();
  settings.screening = *screening;
  return settings;
}

class OracleActor final : public runtime::Actor {
 public:
  // load_topology ran oracle_experiment_check on this experiment already: a failure here (an
  // ActorSpec built in code) is a fault.
  explicit OracleActor(const runtime::ActorSpec& spec) {
    auto settings = read_oracle_settings(spec.experiment);
    if (!settings) throw std::invalid_argument(settings.error().message);
    stages_ = std::move(settings->stages);
    weights_ = std::move(settings->weights);
    if (spec.experiment && spec.experiment["dispatch_timeout_s"]) {
      dispatch_timeout_ms_ = static_cast<int64_t>(
          1000 * spec.experiment["dispatch_timeout_s"].as<double>());
    }
    if (settings->screening.enabled) {
      auto screener = Screener::create(settings->screening, task_scales(spec.experiment));
      if (!screener) throw std::invalid_argument(screener.error().message);
      screener_.emplace(std::move(*screener));
    }
  }

  void on_start(runtime::ActorContext& context) override {
    context.start_timer(kExpiryPeriod, kExpiryTimer);
  }

  void on_timer(runtime::ActorContext& context, uint64_t token) override {
    if (token != kExpiryTimer) return;
    if (const size_t expired = queue_.requeue_expired(context.now_unix_ms(), dispatch_timeout_ms_)) {
      log::warn() << "oracle: " << expired << " evaluation(s) got no result in " << dispatch_timeout_ms_
                  << " ms; dispatching again";
    }
    dispatch(context);
    context.start_timer(kExpiryPeriod, kExpiryTimer);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto body = envelope.getBody();
    if (const auto candidate = runtime::payload_of<msg::Candidate>(envelope)) {
      on_candidate(context, *candidate);
    } else if (const auto ready = runtime::payload_of<msg::EvaluatorReady>(envelope)) {
      queue_.evaluator_ready(envelope.getSender().cStr(), ready->getIncarnation(), ready->getSlots());
    } else if (const auto verdict = runtime::payload_of<msg::Verdict>(envelope)) {
      on_verdict(context, *verdict);
    } else if (const auto request = runtime::payload_of<msg::AdvantageRequest>(envelope)) {
      on_advantage_request(context, envelope.getSender().cStr(), *request);
    } else if (body.isControl()) {
      if (body.getControl().isPeerRestarted()) {
        const std::string peer = body.getControl().getPeerRestarted().cStr();
        if (peer.rfind("evaluator", 0) == 0) queue_.evaluator_lost(peer);
        if (peer.rfind("verifier", 0) == 0) queue_.requeue_all_in_flight();
        if (peer.rfind("archivist", 0) == 0) resend_recent_records(context);
      }
      // Its node is unreachable: its work goes to the others now; a late result is a duplicate.
      if (body.getControl().isPeerLost()) queue_.evaluator_lost(body.getControl().getPeerLost().cStr());
    }
    dispatch(context);
  }

 private:
  void on_candidate(runtime::ActorContext& context, msg::Candidate::Reader candidate) {
    if (screener_ && !queue_.answer(candidate.getId().cStr())) {
      const auto decision = screener_->decide(candidate);
      if (!decision.measure) {
        answer_screened(context, candidate, *decision.prediction);
        return;
      }
    }
    if (queue_.submit(candidate) != EvaluationQueue::Submitted::completed) return;
    if (auto answer = queue_.answer(candidate.getId().cStr())) {
      send_feedback(context, candidate.getGenerator().cStr(), *answer);
    }
  }

  void dispatch(runtime::ActorContext& context) {
    for (const auto& dispatch : queue_.take_dispatches(context.now_unix_ms())) {
      const auto status = context.send(dispatch.evaluator, [&](msg::Envelope::Builder out) {
        auto request = runtime::init_payload<msg::EvalRequest>(out);
        request.setCandidate(dispatch.candidate);
        request.setAttempt(dispatch.attempt);
        if (const auto best = best_speedup_.find(dispatch.candidate.getTask().cStr()); best != best_speedup_.end())
          request.setBestKnownSpeedup(best->second);
      }, runtime::SendOptions{.wait_for_room = std::chrono::milliseconds(0),
                              .trace_id = training::candidate_trace_id(dispatch.candidate.getId().cStr())});
      if (!status) queue_.undo_dispatch(dispatch);
    }
  }

  void on_verdict(runtime::ActorContext& context, msg::Verdict::Reader verdict) {
    const auto candidate = verdict.getResult().getCandidate();
    const std::string id = candidate.getId().cStr();
    if (queue_.answer(id)) return;  // a duplicate result after a re-dispatch
    // CPU candidates: all time is their own; CUDA ones: CUPTI's share of GPU time.
    const double coverage =
        candidate.getDevice() == msg::Device::CUDA ? verdict.getResult().getGpu().getCoverage() : 1.0;
    const double value =
        reward(weights_[training::training_stage_at(stages_, candidate.getStep())], verdict, coverage);

    capnp::MallocMessageBuilder feedback_message;
    auto feedback = feedback_message.initRoot<msg::Feedback>();
    feedback.setCandidateId(id);
    feedback.setReward(value);
    feedback.setVerdict(verdict);
    feedback.setSummary(judging::feedback_report(verdict, value));
    queue_.complete(id, feedback.asReader(), context.now_unix_ms());
    if (screener_) screener_->observe(candidate, value);
    if (verdict.getHonest() && verdict.getResult().getCorrect()) {
      double& best = best_speedup_[candidate.getTask().cStr()];
      best = std::max(best, verdict.getResult().getSpeedup());
    }

    send_feedback(context, candidate.getGenerator().cStr(), feedback.asReader());
    send_record(context, feedback.asReader());
  }

  // Not evaluated: the cost model's mean is the reward; the verdict carries the candidate and no
  // measurement (not compiled, not correct), and `screened` says so to every reader.
  void answer_screened(runtime::ActorContext& context, msg::Candidate::Reader candidate,
                       const RewardPrediction& prediction) {
    const std::string id = candidate.getId().cStr();
    char numbers[240];
    std::snprintf(numbers, sizeof numbers,
                  "predicted reward %.3f +- %.3f (ensemble of %zu, %zu measured results); at least %.0f%% of this "
                  "task's recent candidates are predicted better",
                  prediction.mean, prediction.stddev, screener_->model().members(), screener_->model().observed(),
                  100 * screener_->settings().measure_top);
    const std::string why = std::string("screened by the Oracle's cost model, not evaluated: ") + numbers;
    capnp::MallocMessageBuilder feedback_message;
    auto feedback = feedback_message.initRoot<msg::Feedback>();
    feedback.setCandidateId(id);
    feedback.setReward(prediction.mean);
    auto verdict = feedback.initVerdict();
    verdict.setHonest(true);
    auto result = verdict.initResult();
    // As an Evaluator's result would: the object compiled ahead stays out of results.
    capnp::MallocMessageBuilder stripped;
    result.setCandidate(compile::without_object(candidate, stripped).asReader());
    result.setErrorText(why);
    feedback.setSummary(why + ". The reward is the prediction.");
    feedback.setScreened(true);
    queue_.complete(id, feedback.asReader(), context.now_unix_ms());
    send_feedback(context, candidate.getGenerator().cStr(), feedback.asReader());
    send_record(context, feedback.asReader());
  }

  void send_record(runtime::ActorContext& context, msg::Feedback::Reader feedback) {
    report(context, "archivist", feedback.getCandidateId().cStr(), [&](msg::Envelope::Builder out) {
      auto scored = runtime::init_payload<msg::Scored>(out);
      scored.setVerdict(feedback.getVerdict());
      scored.setReward(feedback.getReward());
      scored.setSummary(feedback.getSummary());
      scored.setScreened(feedback.getScreened());
    });
  }

  // Records in flight to the Archivist died with it; the archive drops what it already has.
  void resend_recent_records(runtime::ActorContext& context) {
    for (const auto& feedback : queue_.recent_answers(kRecordsResentToArchivist)) {
      send_record(context, feedback);
    }
  }

  void send_feedback(runtime::ActorContext& context, const std::string& generator,
                     msg::Feedback::Reader feedback) {
    report(context, generator, feedback.getCandidateId().cStr(),
           [&](msg::Envelope::Builder out) { runtime::set_payload<msg::Feedback>(out, feedback); });
  }

  void on_advantage_request(runtime::ActorContext& context, const std::string& learner,
                            msg::AdvantageRequest::Reader request) {
    std::vector<TrajectoryRewards> trajectories;
    for (auto trajectory : request.getTrajectories()) {
      TrajectoryRewards rewards{trajectory.getId().cStr(), trajectory.getTask().cStr(), {}};
      for (auto turn : trajectory.getTurns()) rewards.rewards.push_back(turn.getReward());
      trajectories.push_back(std::move(rewards));
    }
    const auto estimator =
        request.getEstimator() == msg::AdvantageEstimator::GRPO ? Estimator::grpo : Estimator::trloo;
    const auto items = compute_advantages(trajectories, estimator);
    if (screener_) {
      const auto step = screener_->counts_of_step(request.getStep());
      const auto total = screener_->counts();
      log::info() << "oracle: step " << request.getStep() << ": " << step.measured << " candidates evaluated, "
                  << step.screened << " screened by the cost model (run: " << total.measured << " evaluated, "
                  << total.screened << " screened)";
    }
    report(context, learner, "", [&](msg::Envelope::Builder out) {
      auto advantages = runtime::init_payload<msg::Advantages>(out);
      advantages.setStep(request.getStep());
      auto list = advantages.initItems(static_cast<unsigned>(items.size()));
      for (unsigned i = 0; i < items.size(); ++i) {
        list[i].setTrajectoryId(items[i].trajectory_id);
        list[i].setTurn(items[i].turn);
        list[i].setReturn(items[i].return_value);
        list[i].setAdvantage(items[i].advantage);
      }
    });
  }

  // A lost report is recovered by the requester's re-send; say so, and go on.
  // `candidate_id`: the candidate the message is about (its trace id), empty for none.
  void report(runtime::ActorContext& context, const std::string& recipient, std::string_view candidate_id,
              const std::function<void(msg::Envelope::Builder)>& fill) {
    runtime::SendOptions options;
    if (!candidate_id.empty()) options.trace_id = training::candidate_trace_id(candidate_id);
    const auto status = context.send(recipient, fill, options);
    if (!status) {
      log::warn() << "oracle: message to '" << recipient << "' not delivered: " << status.error().describe();
    }
  }

  std::vector<training::TrainingStage> stages_;
  std::vector<RewardWeights> weights_;  // one per stage
  int64_t dispatch_timeout_ms_ = 45000;
  EvaluationQueue queue_;
  std::optional<Screener> screener_;  // experiment.oracle.screening.enabled
  // Per task, the best speedup of an honest, correct result so far: sent with each EvalRequest,
  // against which the Evaluator times a far faster result again (best_known_bound.h).
  std::map<std::string, double> best_speedup_;
};

}  // namespace

std::unique_ptr<runtime::Actor> make_oracle_actor(const runtime::ActorSpec& spec) {
  return std::make_unique<OracleActor>(spec);
}

Status oracle_experiment_check(const YAML::Node& experiment) {
  if (auto settings = read_oracle_settings(experiment); !settings) return settings.error();
  return {};
}

std::vector<runtime::ExperimentKey> oracle_experiment_keys() {
  std::vector<runtime::ExperimentKey> keys = {
      {"dispatch_timeout_s", runtime::ValueKind::number, "45"},
      {"training_stages", runtime::ValueKind::list_of_maps, "[{name: warmup, steps: 2}, {name: main}]"},
      {"training_stages[].name", runtime::ValueKind::text, "warmup"},
      {"training_stages[].steps", runtime::ValueKind::integer, "2"},
      {"tasks_dir", runtime::ValueKind::text, "kernels/tasks"},
      // The cost model's screening (docs/cost-model.md); ranges are checked when the Oracle starts.
      {"oracle.screening.enabled", runtime::ValueKind::flag, "false"},
      {"oracle.screening.measure_top", runtime::ValueKind::number, "0.5"},
      {"oracle.screening.explore", runtime::ValueKind::number, "0.1"},
      {"oracle.screening.warmup_samples", runtime::ValueKind::integer, "64"},
      {"oracle.screening.window", runtime::ValueKind::integer, "256"},
      {"oracle.screening.train_steps", runtime::ValueKind::integer, "4"}};
  // experiment.reward, and each stage's override of it.
  for (const std::string prefix : {"reward.", "training_stages[].reward."}) {
    keys.push_back({prefix + "correct", runtime::ValueKind::number, "0.5"});
    keys.push_back({prefix + "speedup", runtime::ValueKind::number, "0.5"});
    keys.push_back({prefix + "speedup_cap", runtime::ValueKind::number, "3.0"});
    keys.push_back({prefix + "coverage", runtime::ValueKind::number, "0.25"});
    keys.push_back({prefix + "memory", runtime::ValueKind::number, "0"});
    keys.push_back({prefix + "memory_scale_mb", runtime::ValueKind::number, "256"});
    keys.push_back({prefix + "energy", runtime::ValueKind::number, "0"});
    keys.push_back({prefix + "energy_cap", runtime::ValueKind::number, "3.0"});
    keys.push_back({prefix + "convergence", runtime::ValueKind::number, "0"});
    keys.push_back({prefix + "shapes", runtime::ValueKind::number, "1"});
  }
  return keys;
}

}  // namespace drk::oracle
