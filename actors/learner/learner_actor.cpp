#include "actors/learner/learner_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include <capnp/message.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include "actors/learner/learner_settings.h"
#include "actors/learner/ppo_loss.h"
#include "actors/learner/rejection_sampling.h"
#include "actors/learner/rollback_monitor.h"
#include "actors/learner/task_selection.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "kernels/schedule/policy_network.h"
#include "runtime/transport/borrowed_data.h"
#include "runtime/log.h"
#include "runtime/topology/topology.h"

namespace drk::learner {
namespace {

using schedule::Family;

// One rollout of the step: where it went and what came back.
struct Rollout {
  std::string id;
  const kernels::Task* task = nullptr;
  uint32_t sample_index = 0;
  size_t generator = 0;  // index into generators_
  uint64_t timer_token = 0;
  std::unique_ptr<capnp::MallocMessageBuilder> trajectory;  // msg::Trajectory once received
};

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

struct UpdateStats {
  double loss = 0.0;
  double clip_fraction = 0.0;
  double approx_kl = 0.0;
  uint32_t ppo_epochs = 0;
  uint32_t prs_rejected = 0, mrs_rejected = 0, mrs_vetoed = 0, stale_rejected = 0;
  bool rolled_back = false;
  uint32_t rolled_back_to = 0;
};

// Why a turn stayed out of the loss (Turn.rejectedBy).
constexpr const char* kNoAdvantage = "no_advantage";
constexpr const char* kMalformed = "malformed";
constexpr const char* kPrs = "prs";
constexpr const char* kMrsBand = "mrs_band";
constexpr const char* kMrsVeto = "mrs_veto";
constexpr const char* kStale = "stale";
constexpr const char* kRollback = "rollback";

// load_topology ran learner_experiment_check on this experiment already: a failure here (an
// ActorSpec built in code) is a fault.
Settings settings_or_fault(const YAML::Node& experiment) {
  auto settings = read_settings(experiment);
  if (!settings) throw std::invalid_argument(settings.error().message);
  return std::move(*settings);
}

class LearnerActor final : public runtime::Actor {
 public:
  explicit LearnerActor(const runtime::ActorSpec& spec)
      : settings_(settings_or_fault(spec.experiment)),
        policy_(settings_.seed,
                settings_.device == kernels::DeviceKind::cuda ? schedule::Device::cuda : schedule::Device::cpu),
        rollback_(settings_.rollback) {}

  void on_start(runtime::ActorContext& context) override {
    load_tasks();
    reset_optimizer();
    restore_or_initialise(context.spec().run_dir);
    generators_ = context.members("generator");
    if (generators_.empty()) throw std::runtime_error("the topology has no generator: add one");
    broadcast_weights(context);
    // Reports sent before a restart may have been lost with it; the Archivist records each
    // once and the head prints each step once.
    for (const auto& report : reports_) send_report(context, report);
    if (step_ < settings_.steps) start_step(context);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (const auto trajectory = runtime::payload_of<msg::Trajectory>(envelope)) {
      on_trajectory(context, *trajectory);
    } else if (const auto advantages = runtime::payload_of<msg::Advantages>(envelope)) {
      on_advantages(context, *advantages);
    } else if (envelope.getBody().isControl()) {
      auto control = envelope.getBody().getControl();
      if (control.isPeerRestarted()) on_peer_restarted(context, control.getPeerRestarted().cStr());
    }
  }

  void on_timer(runtime::ActorContext& context, uint64_t token) override {
    if (token == advantage_token_ && awaiting_advantages_) {
      send_advantage_request(context);
      return;
    }
    for (auto& rollout : rollouts_) {
      if (rollout.timer_token == token && !rollout.trajectory) {
        rollout.generator = (rollout.generator + 1) % generators_.size();
        send_rollout(context, rollout);
        return;
      }
    }
  }

 private:
  void load_tasks() {
    auto catalog = kernels::TaskCatalog::load(settings_.tasks_dir);
    if (!catalog) throw std::runtime_error("task catalog: " + catalog.error().describe());
    catalog_ = std::move(*catalog);
    auto selection = select_tasks(catalog_, settings_.tasks, settings_.device);
    if (!selection) throw std::runtime_error(selection.error().describe());
    tasks_ = std::move(selection->tasks);
    if (!selection->other_device.empty()) {
      std::string skipped;
      for (const auto& name : selection->other_device) skipped += (skipped.empty() ? "" : ", ") + name;
      log::info() << "learner: experiment.tasks is all: skipping " << selection->other_device.size()
                  << " tasks without " << kernels::device_name(settings_.device) << " shapes: " << skipped;
    }
  }

  void restore_or_initialise(const std::string& run_dir) {
    run_dir_ = run_dir;
    auto state = schedule::read_checkpoint_state(run_dir);
    if (!state) throw std::runtime_error(state.error().describe());
    if (!state->has_value()) {
      checkpoint();
      return;
    }
    const auto& saved = **state;
    auto bytes = schedule::read_policy_version(run_dir, saved.version);
    if (!bytes) throw std::runtime_error(bytes.error().describe());
    if (auto loaded = policy_.load(*bytes); !loaded) throw std::runtime_error(loaded.error().describe());
    auto optimizer_bytes = schedule::read_optimizer_state(run_dir, saved.version);
    if (optimizer_bytes && optimizer_bytes->has_value()) {
      std::istringstream stream(**optimizer_bytes);
      torch::serialize::InputArchive archive;
      archive.load_from(stream);
      optimizer_->load(archive);
    }
    version_ = saved.version;
    step_ = saved.step;
    reports_ = saved.reports;
    // The rollback rule's state follows from the reports: play them again.
    for (size_t index = 0; index < reports_.size(); ++index) {
      (void)rollback_.observe(index == 0 ? 0 : reports_[index - 1].policy_version, reports_[index].mean_reward);
    }
  }

  void reset_optimizer() {
    optimizer_ = std::make_unique<torch::optim::Adam>(
        policy_.network().parameters(), torch::optim::AdamOptions(stage().learning_rate));
  }

  const StageSettings& stage() const {
    return settings_.stage_settings[training::training_stage_at(settings_.stages, step_)];
  }

  void checkpoint() {
    if (run_dir_.empty()) return;
    torch::serialize::OutputArchive archive;
    optimizer_->save(archive);
    std::ostringstream optimizer_bytes;
    archive.save_to(optimizer_bytes);
    const schedule::CheckpointState state{version_, step_, reports_};
    auto written = schedule::write_checkpoint(run_dir_, state, policy_.serialize(), optimizer_bytes.str());
    if (!written) throw std::runtime_error("checkpoint: " + written.error().describe());
  }

  void broadcast_weights(runtime::ActorContext& context) {
    const std::string bytes = policy_.serialize();
    for (const auto& generator : generators_) send_weights(context, generator, bytes);
    send_weights(context, destination(context, "archivist"), bytes);
  }

  void send_weights(runtime::ActorContext& context, const std::string& recipient, const std::string& bytes) {
    // A Generator that misses a broadcast reads the checkpoint when it (re)starts, and the
    // Archivist's record of versions is not on the training path.
    (void)context.send(recipient, [&](msg::Envelope::Builder envelope) {
      auto weights = runtime::init_payload<msg::PolicyWeights>(envelope);
      weights.setVersion(version_);
      weights.setStep(step_);
      weights.adoptParameters(runtime::borrowed_data(
          weights, kj::arrayPtr(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size())));
    });
  }

  void start_step(runtime::ActorContext& context) {
    step_started_ms_ = context.now_unix_ms();
    rollouts_.clear();
    awaiting_advantages_ = false;
    received_ = 0;
    size_t next_generator = 0;
    for (const kernels::Task* task : tasks_) {
      for (uint32_t sample = 0; sample < settings_.group_size; ++sample) {
        Rollout rollout;
        rollout.id = "s" + std::to_string(step_) + "/" + task->name + "/" + std::to_string(sample);
        rollout.task = task;
        rollout.sample_index = sample;
        rollout.generator = next_generator++ % generators_.size();
        rollouts_.push_back(std::move(rollout));
      }
    }
    for (auto& rollout : rollouts_) send_rollout(context, rollout);
  }

  void send_rollout(runtime::ActorContext& context, Rollout& rollout) {
    // A failed send is retried by the deadline.
    (void)context.send(generators_[rollout.generator], [&](msg::Envelope::Builder envelope) {
      auto request = runtime::init_payload<msg::RolloutRequest>(envelope);
      request.setStep(step_);
      request.setPolicyVersion(version_);
      request.setTrajectoryId(rollout.id);
      request.setSampleIndex(rollout.sample_index);
      request.setTurns(settings_.turns);
      kernels::fill_task_message(*rollout.task, settings_.device, request.initTask());
    });
    rollout.timer_token = next_token_++;
    context.start_timer(std::chrono::milliseconds(settings_.rollout_timeout_ms), rollout.timer_token);
  }

  void on_trajectory(runtime::ActorContext& context, msg::Trajectory::Reader trajectory) {
    if (trajectory.getStep() != step_ || step_ >= settings_.steps) return;
    const std::string id = trajectory.getId().cStr();
    for (auto& rollout : rollouts_) {
      if (rollout.id != id || rollout.trajectory) continue;
      rollout.trajectory = std::make_unique<capnp::MallocMessageBuilder>();
      rollout.trajectory->setRoot(trajectory);
      if (++received_ == rollouts_.size()) {
        awaiting_advantages_ = true;
        send_advantage_request(context);
      }
      return;
    }
  }

  void send_advantage_request(runtime::ActorContext& context) {
    (void)context.send(destination(context, "oracle"), [&](msg::Envelope::Builder envelope) {
      auto request = runtime::init_payload<msg::AdvantageRequest>(envelope);
      request.setStep(step_);
      request.setEstimator(settings_.estimator);
      auto trajectories = request.initTrajectories(static_cast<unsigned>(rollouts_.size()));
      for (size_t index = 0; index < rollouts_.size(); ++index) {
        trajectories.setWithCaveats(static_cast<unsigned>(index),
                                    rollouts_[index].trajectory->getRoot<msg::Trajectory>().asReader());
      }
    });
    advantage_token_ = next_token_++;
    context.start_timer(std::chrono::milliseconds(settings_.advantage_timeout_ms), advantage_token_);
  }

  void on_peer_restarted(runtime::ActorContext& context, const std::string& name) {
    const auto generator = std::find(generators_.begin(), generators_.end(), name);
    if (generator != generators_.end()) {
      const size_t restarted = static_cast<size_t>(generator - generators_.begin());
      send_weights(context, name, policy_.serialize());
      for (auto& rollout : rollouts_) {
        if (rollout.trajectory || rollout.generator != restarted) continue;
        rollout.generator = (rollout.generator + 1) % generators_.size();
        send_rollout(context, rollout);
      }
    }
    if (name == destination(context, "oracle") && awaiting_advantages_) send_advantage_request(context);
    if (name == destination(context, "archivist")) {
      send_weights(context, name, policy_.serialize());
      for (const auto& report : reports_) send_report(context, report);
    }
  }

  void on_advantages(runtime::ActorContext& context, msg::Advantages::Reader advantages) {
    if (!awaiting_advantages_ || advantages.getStep() != step_) return;
    awaiting_advantages_ = false;
    std::map<std::pair<std::string, uint32_t>, double> by_turn;
    for (auto item : advantages.getItems()) {
      by_turn[{item.getTrajectoryId().cStr(), item.getTurn()}] = item.getAdvantage();
    }
    std::map<std::pair<std::string, uint32_t>, double> returns;
    for (auto item : advantages.getItems()) returns[{item.getTrajectoryId().cStr(), item.getTurn()}] = item.getReturn();
    const double reward = mean_reward();
    const RollbackDecision decision = rollback_.observe(version_, reward);
    UpdateStats stats;
    if (decision.rollback) {
      roll_back(decision, reward);
      stats.rolled_back = true;
      stats.rolled_back_to = decision.target_version;
    } else {
      stats = update(by_turn);
    }
    record_outcomes(by_turn, returns);
    ++version_;
    send_samples(context);
    report_and_record(context, stats);
    ++step_;
    checkpoint();
    broadcast_weights(context);
    if (step_ < settings_.steps) start_step(context);
  }

  double mean_reward() const {
    double sum = 0.0;
    uint32_t turns = 0;
    for (const auto& rollout : rollouts_) {
      for (auto turn : rollout.trajectory->getRoot<msg::Trajectory>().getTurns()) {
        sum += turn.getReward();
        ++turns;
      }
    }
    return turns == 0 ? 0.0 : sum / turns;
  }

  // Back to the parameters of `decision.target_version` (kept in RUN_DIR/policy), with a fresh
  // optimizer; they become the next version.
  void roll_back(const RollbackDecision& decision, double reward) {
    auto bytes = schedule::read_policy_version(run_dir_, decision.target_version);
    if (!bytes) throw std::runtime_error("rollback: " + bytes.error().describe());
    if (auto loaded = policy_.load(*bytes); !loaded) throw std::runtime_error("rollback: " + loaded.error().describe());
    reset_optimizer();
    char line[512];
    std::snprintf(line, sizeof line,
                  "learner: ROLLBACK at step %u: mean reward %.3f is more than %.0f%% below the best stable "
                  "%.3f for %u steps in a row; policy v%u is back as v%u; diagnostic mode (learning rate x%g "
                  "until a step is stable)",
                  step_ + 1, reward, 100.0 * settings_.rollback.drop, decision.reference,
                  settings_.rollback.patience, decision.target_version, version_ + 1,
                  settings_.diagnostic_learning_rate_scale);
    log::warn() << line;
  }

  // Turn.advantage, return, trained and rejectedBy on the step's trajectories, as the update
  // left them (update() marks what it trained and rejected; the rest had no advantage).
  void record_outcomes(const std::map<std::pair<std::string, uint32_t>, double>& advantages,
                       const std::map<std::pair<std::string, uint32_t>, double>& returns) {
    for (auto& rollout : rollouts_) {
      auto turns = rollout.trajectory->getRoot<msg::Trajectory>().getTurns();
      for (unsigned index = 0; index < turns.size(); ++index) {
        auto turn = turns[index];
        const std::pair<std::string, uint32_t> key{rollout.id, index + 1};
        if (const auto found = advantages.find(key); found != advantages.end()) turn.setAdvantage(found->second);
        if (const auto found = returns.find(key); found != returns.end()) turn.setReturn(found->second);
        if (auto family = schedule::parse_family(turn.getFamily().cStr())) {
          const auto actions = turn.asReader().getActions();
          const size_t knob_count = schedule::knobs(*family, policy_.device()).size();
          auto kept = turn.initKeptDecisions(actions.size());
          for (unsigned knob = 0; knob < actions.size() && knob < knob_count; ++knob) {
            kept.set(knob, actions[knob] == schedule::keep_decision(*family, policy_.device(), static_cast<int>(knob)));
          }
        }
        if (turn.getTrained() || turn.getRejectedBy().size() != 0) continue;
        turn.setRejectedBy(advantages.count(key) == 0 ? kNoAdvantage : kRollback);
      }
    }
  }

  // Every trajectory of the step, with its outcome, to the Archivist: the training samples of
  // `drk archive export` (docs/archive.md). Best effort, like the Oracle's records.
  void send_samples(runtime::ActorContext& context) {
    const std::string archivist = destination(context, "archivist");
    for (const auto& rollout : rollouts_) {
      (void)context.send(archivist, [&](msg::Envelope::Builder envelope) {
        runtime::set_payload<msg::Trajectory>(envelope, rollout.trajectory->getRoot<msg::Trajectory>().asReader());
      });
    }
  }

  UpdateStats update(const std::map<std::pair<std::string, uint32_t>, double>& advantages) {
    std::map<Family, FamilyBatch> batches;
    const int observation_size = schedule::observation_size(policy_.device());
    for (size_t rollout_index = 0; rollout_index < rollouts_.size(); ++rollout_index) {
      const auto& rollout = rollouts_[rollout_index];
      auto turns = rollout.trajectory->getRoot<msg::Trajectory>().getTurns();
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
        const size_t knob_count = schedule::knobs(*family, policy_.device()).size();
        if (turn.getObservation().size() != static_cast<unsigned>(observation_size) ||
            turn.getActions().size() != knob_count || turn.getActionLogprobs().size() != knob_count) {
          turns[turn_number - 1].setRejectedBy(kMalformed);
          continue;
        }
        FamilyBatch& batch = batches[*family];
        for (float value : turn.getObservation()) batch.observations.push_back(value);
        for (size_t knob = 0; knob < knob_count; ++knob) {
          const uint16_t action = turn.getActions()[static_cast<unsigned>(knob)];
          if (action > schedule::keep_decision(*family, policy_.device(), static_cast<int>(knob))) continue;
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
    UpdateStats stats;
    auto tensors = make_tensors(batches);
    select_rows(batches, tensors, advantages, stats);
    run_epochs(tensors, stats);
    return stats;
  }

  struct Tensors {
    Family family;
    torch::Tensor observations, actions, old_logprobs, advantages, later_turn;
    torch::Tensor learner_logprobs;  // before the update: the previous policy of the trust region
  };

  std::vector<Tensors> make_tensors(std::map<Family, FamilyBatch>& batches) {
    std::vector<Tensors> tensors;
    const int64_t observation_size = schedule::observation_size(policy_.device());
    torch::NoGradGuard no_grad;
    for (auto& [family, batch] : batches) {
      if (batch.rows == 0) continue;
      const auto knob_count = static_cast<int64_t>(schedule::knobs(family, policy_.device()).size());
      Tensors t{
          family,
          torch::from_blob(batch.observations.data(), {batch.rows, observation_size}, torch::kFloat32).clone(),
          torch::from_blob(batch.actions.data(), {batch.rows, knob_count}, torch::kInt64).clone(),
          torch::from_blob(batch.old_logprobs.data(), {batch.rows, knob_count}, torch::kFloat32).clone(),
          torch::from_blob(batch.advantages.data(), {batch.rows}, torch::kFloat32).clone(),
          torch::from_blob(batch.later_turn.data(), {batch.rows}, torch::kUInt8).to(torch::kBool),
          {}};
      t.learner_logprobs = policy_.network().log_probs(family, t.observations, t.actions, t.later_turn).detach();
      tensors.push_back(std::move(t));
    }
    return tensors;
  }

  // MRS per trajectory, then PRS per turn; marks each turn and keeps only the trained rows of
  // `tensors`.
  void select_rows(std::map<Family, FamilyBatch>& batches, std::vector<Tensors>& tensors,
                   const std::map<std::pair<std::string, uint32_t>, double>& advantages, UpdateStats& stats) {
    std::vector<std::vector<double>> log_ratios(rollouts_.size());
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
        auto turn = rollouts_[source.rollout].trajectory->getRoot<msg::Trajectory>().getTurns()[source.turn];
        auto logprobs = turn.initLearnerLogprobs(static_cast<unsigned>(knob_count));
        for (int64_t knob = 0; knob < knob_count; ++knob) {
          const float value = learner_data[row * knob_count + knob];
          logprobs.set(static_cast<unsigned>(knob), value);
          log_ratios[source.rollout].push_back(static_cast<double>(value) - behaviour_data[row * knob_count + knob]);
        }
      }
    }
    std::vector<MrsOutcome> mrs(rollouts_.size());
    for (size_t index = 0; index < rollouts_.size(); ++index) mrs[index] = mrs_check(settings_.mrs, log_ratios[index]);
    tensor_index = 0;
    for (auto& [family, batch] : batches) {
      if (batch.rows == 0) continue;
      auto& t = tensors[tensor_index++];
      for (int64_t row = 0; row < batch.rows; ++row) {
        const auto& source = batch.sources[static_cast<size_t>(row)];
        const auto& rollout = rollouts_[source.rollout];
        auto turn = rollout.trajectory->getRoot<msg::Trajectory>().getTurns()[source.turn];
        const char* rejected = nullptr;
        // PRS judges a measured profile. A screened turn (the cost model's answer) has none, its
        // coverage reads 0: PRS leaves it to the update as it leaves an incorrect turn.
        const bool prs_judges_as_correct = turn.getCorrect() && !turn.getScreened();
        const uint32_t played_by = rollout.trajectory->getRoot<msg::Trajectory>().getPolicyVersion();
        if (advantages.count({rollout.id, source.turn + 1}) == 0) {
          rejected = kNoAdvantage;
        } else if (played_by + settings_.max_staleness < version_) {
          rejected = kStale;
          ++stats.stale_rejected;
        } else if (mrs[source.rollout] == MrsOutcome::vetoed) {
          rejected = kMrsVeto;
          ++stats.mrs_rejected;
          ++stats.mrs_vetoed;
        } else if (mrs[source.rollout] == MrsOutcome::outside_band) {
          rejected = kMrsBand;
          ++stats.mrs_rejected;
        } else if (!prs_keeps(settings_.prs, prs_judges_as_correct, turn.getCoverage(),
                              prs_uniform_draw(settings_.seed, turn.getCandidateId().cStr()))) {
          rejected = kPrs;
          ++stats.prs_rejected;
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
                                 [](const Tensors& t) { return t.observations.size(0) == 0; }),
                  tensors.end());
  }

  // experiment.ppo_epochs epochs of the clipped objective, stopped early (before the optimizer
  // step) when the approximate KL to the policy before the update exceeds kl_max.
  void run_epochs(const std::vector<Tensors>& tensors, UpdateStats& stats) {
    if (tensors.empty()) return;
    const StageSettings& current = stage();
    const double scale = rollback_.diagnostic() ? settings_.diagnostic_learning_rate_scale : 1.0;
    for (auto& group : optimizer_->param_groups()) {
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(current.learning_rate * scale);
    }
    auto& network = policy_.network();
    double loss_sum_over_epochs = 0.0, clip_sum = 0.0, kl_sum_over_epochs = 0.0;
    for (uint32_t epoch = 0; epoch < current.ppo_epochs; ++epoch) {
      optimizer_->zero_grad();
      torch::Tensor loss_sum = torch::zeros({});
      double clipped = 0.0, kl_sum = 0.0, kl_previous_sum = 0.0;
      int64_t count = 0;
      for (const auto& batch : tensors) {
        const auto new_logp =
            network.log_probs(batch.family, batch.observations, batch.actions, batch.later_turn);
        const auto terms = learner::ppo_terms(new_logp, batch.old_logprobs, batch.advantages, settings_.ppo);
        loss_sum = loss_sum + terms.loss_sum;
        clipped += terms.clipped;
        kl_sum += terms.approx_kl_sum;
        kl_previous_sum += learner::approx_kl_sum(batch.learner_logprobs, new_logp);
        count += terms.count;
      }
      if (kl_bound_reached(kl_previous_sum / static_cast<double>(count), current.kl_max)) break;
      const auto loss = loss_sum / static_cast<double>(count);
      loss.backward();
      optimizer_->step();
      ++stats.ppo_epochs;
      loss_sum_over_epochs += loss.item<double>();
      clip_sum += clipped / static_cast<double>(count);
      kl_sum_over_epochs += kl_sum / static_cast<double>(count);
    }
    if (stats.ppo_epochs == 0) return;
    stats.loss = loss_sum_over_epochs / stats.ppo_epochs;
    stats.clip_fraction = clip_sum / stats.ppo_epochs;
    stats.approx_kl = kl_sum_over_epochs / stats.ppo_epochs;
  }

  // Sends the StepReport of the step just trained and records its mean reward.
  void report_and_record(runtime::ActorContext& context, const UpdateStats& stats) {
    const uint32_t stage_index = static_cast<uint32_t>(training::training_stage_at(settings_.stages, step_));
    double reward_sum = 0.0, best_speedup = 0.0;
    uint32_t turns = 0, screened = 0, correct = 0;
    for (const auto& rollout : rollouts_) {
      for (auto turn : rollout.trajectory->getRoot<msg::Trajectory>().getTurns()) {
        ++turns;
        reward_sum += turn.getReward();
        // A screened turn's correctness is a prediction: correct% counts measured turns only.
        if (turn.getScreened()) {
          ++screened;
          continue;
        }
        if (turn.getCorrect()) ++correct;
        if (turn.getCorrect() && turn.getHonest()) best_speedup = std::max(best_speedup, turn.getSpeedup());
      }
    }
    const uint32_t measured = turns - screened;
    schedule::StepSummary summary;
    summary.step = step_;
    summary.policy_version = version_;
    summary.mean_reward = turns == 0 ? 0.0 : reward_sum / turns;
    summary.best_speedup = best_speedup;
    summary.correct_fraction = measured == 0 ? 0.0 : static_cast<double>(correct) / measured;
    summary.measured = measured;
    summary.screened = screened;
    summary.trajectories = static_cast<uint32_t>(rollouts_.size());
    summary.loss = stats.loss;
    summary.seconds = static_cast<double>(context.now_unix_ms() - step_started_ms_) / 1000.0;
    summary.clip_fraction = stats.clip_fraction;
    summary.approx_kl = stats.approx_kl;
    summary.rolled_back = stats.rolled_back;
    summary.rolled_back_to = stats.rolled_back_to;
    summary.diagnostic = rollback_.diagnostic();
    summary.prs_rejected = stats.prs_rejected;
    summary.mrs_rejected = stats.mrs_rejected;
    summary.mrs_vetoed = stats.mrs_vetoed;
    summary.stale_rejected = stats.stale_rejected;
    summary.ppo_epochs = stats.ppo_epochs;
    summary.stage = settings_.stage_settings[stage_index].name;
    reports_.push_back(summary);
    send_report(context, summary);
  }

  // Reports go to the Archivist, which records them and then shows them to the head: a step
  // is shown, and the run ends, only once it is on record. Training does not wait on them.
  void send_report(runtime::ActorContext& context, const schedule::StepSummary& summary) {
    auto fill = [&](msg::Envelope::Builder envelope) {
      auto report = runtime::init_payload<msg::StepReport>(envelope);
      report.setStep(summary.step);
      report.setPolicyVersion(summary.policy_version);
      report.setMeanReward(summary.mean_reward);
      report.setBestSpeedup(summary.best_speedup);
      report.setCorrectFraction(summary.correct_fraction);
      report.setTrajectories(summary.trajectories);
      report.setLoss(summary.loss);
      report.setSeconds(summary.seconds);
      report.setFinished(summary.step + 1 >= settings_.steps);
      report.setClipFraction(summary.clip_fraction);
      report.setApproxKl(summary.approx_kl);
      report.setRolledBack(summary.rolled_back);
      report.setRolledBackTo(summary.rolled_back_to);
      report.setDiagnostic(summary.diagnostic);
      report.setPrsRejected(summary.prs_rejected);
      report.setMeasured(summary.measured);
      report.setScreened(summary.screened);
      report.setMrsRejected(summary.mrs_rejected);
      report.setMrsVetoed(summary.mrs_vetoed);
      report.setStaleRejected(summary.stale_rejected);
      report.setPpoEpochs(summary.ppo_epochs);
      report.setStage(summary.stage);
    };
    (void)context.send(destination(context, "archivist"), fill);
  }

  static std::string destination(runtime::ActorContext& context, const std::string& role) {
    const auto members = context.members(role);
    return members.empty() ? role : members.front();
  }

  const Settings settings_;
  schedule::Policy policy_;
  RollbackMonitor rollback_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  kernels::TaskCatalog catalog_;
  std::vector<const kernels::Task*> tasks_;
  std::vector<std::string> generators_;
  std::string run_dir_;
  uint32_t version_ = 0;
  uint32_t step_ = 0;
  std::vector<schedule::StepSummary> reports_;  // one per finished step
  std::vector<Rollout> rollouts_;
  size_t received_ = 0;
  bool awaiting_advantages_ = false;
  uint64_t advantage_token_ = 0;
  uint64_t next_token_ = 1;
  int64_t step_started_ms_ = 0;
};

}  // namespace

std::unique_ptr<runtime::Actor> make_learner_actor(const runtime::ActorSpec& spec) {
  return std::make_unique<LearnerActor>(spec);
}

}  // namespace drk::learner
