#include "actors/learner/learner_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include <capnp/message.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include "actors/learner/learner_settings.h"
#include "actors/learner/policy_reports.h"
#include "actors/learner/ppo_loss.h"
#include "actors/learner/rejection_sampling.h"
#include "actors/learner/rollback_monitor.h"
#include "actors/learner/step_batch.h"
#include "actors/learner/task_selection.h"
#include "base/file_system.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "kernels/schedule/policy_network.h"
#include "runtime/http/bearer_auth.h"
#include "runtime/http/http_server.h"
#include "runtime/transport/borrowed_data.h"
#include "runtime/log.h"
#include "runtime/topology/topology.h"
#include "training/served_policy.h"

namespace drk::learner {
namespace {

using schedule::Family;

constexpr uint64_t kReportPollToken = std::numeric_limits<uint64_t>::max();
constexpr std::chrono::milliseconds kReportPollMs{10};
constexpr const char* kLearnerTokenVariable = "DRK_LEARNER_TOKEN";

// One rollout of the step: where it went and what came back.
struct Rollout {
  std::string id;
  const kernels::Task* task = nullptr;
  uint32_t sample_index = 0;
  size_t generator = 0;  // index into generators_
  uint64_t timer_token = 0;
  std::unique_ptr<capnp::MallocMessageBuilder> trajectory;  // msg::Trajectory once received
};


struct UpdateStats {
  double loss = 0.0;
  double clip_fraction = 0.0;
  double approx_kl = 0.0;
  uint32_t ppo_epochs = 0;
  SelectionCounts selection;
  bool rolled_back = false;
  uint32_t rolled_back_to = 0;
};


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

  ~LearnerActor() override {
    if (reports_board_) reports_board_->close();
  }

  void on_start(runtime::ActorContext& context) override {
    load_tasks();
    reset_optimizer();
    restore_or_initialise(context.spec().run_dir);
    generators_ = context.members("generator");
    if (generators_.empty()) throw std::runtime_error("the topology has no generator: add one");
    if (settings_.external) serve_policy_reports(context);
    broadcast_weights(context);
    // Reports sent before a restart may have been lost with it; the Archivist records each
    // once and the head prints each step once.
    for (const auto& report : reports_) send_report(context, report);
    start_step_when_due(context);
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
    if (token == kReportPollToken) {
      take_policy_reports(context);
      context.start_timer(kReportPollMs, kReportPollToken);
      return;
    }
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
  // experiment.learner.backend external: the trainer's POST /policy and GET /policy
  // (policy_reports.h), on the address of experiment.learner.listen; the endpoint's address in
  // RUN_DIR/learner_endpoint. A port taken or a missing token is a fault: the run cannot train.
  void serve_policy_reports(runtime::ActorContext& context) {
    served_.version = version_;
    reports_board_ = std::make_unique<PolicyReports>(served_, settings_.steps, settings_.max_staleness);
    reports_board_->set_steps_done(step_);
    auto token = runtime::http::read_bearer_token(settings_.token_file, kLearnerTokenVariable);
    if (!token) throw std::runtime_error("experiment.learner.token_file: " + token.error().message);
    auto required = runtime::http::required_token(
        settings_.listen, *token,
        std::string("set experiment.learner.token_file or $") + kLearnerTokenVariable);
    if (!required) throw std::runtime_error("experiment.learner.listen: " + required.error().message);
    runtime::http::HttpServerOptions options;
    options.address = settings_.listen;
    options.port = settings_.port;
    options.threads = 4;  // a GET that waits for a step holds one
    options.bearer_token = *required;
    runtime::http::Router router;
    reports_board_->add_routes(router);
    auto server = runtime::http::HttpServer::start(options, std::move(router));
    if (!server) throw std::runtime_error("experiment.learner.port: " + server.error().describe());
    policy_server_ = std::move(*server);
    const std::string url = "http://" + settings_.listen + ":" + std::to_string(policy_server_->port());
    if (!context.spec().run_dir.empty()) {
      auto written = write_file_atomically(real_file_system(), context.spec().run_dir + "/learner_endpoint", url + "\n");
      if (!written) throw std::runtime_error(written.error().describe());
    }
    log::info() << "learner: the trainer reports policy versions to " << url << "/policy";
    context.start_timer(kReportPollMs, kReportPollToken);
  }

  // The versions the trainer reported since the last look: each is the current version, sent to
  // the Generators and recorded; a step waiting for one starts.
  void take_policy_reports(runtime::ActorContext& context) {
    auto reports = reports_board_->take_new();
    if (reports.empty()) return;
    // One by one: each broadcast carries its own version, so the archive records every one.
    for (const auto& report : reports) {
      served_ = report;
      version_ = report.version;
      log::info() << "learner: the trainer reports policy v" << report.version;
      broadcast_weights(context);
    }
    checkpoint();
    start_step_when_due(context);
  }

  // The next step, unless one is under way or (external) it waits for the trainer: step s is
  // played by version s - max_staleness or later.
  void start_step_when_due(runtime::ActorContext& context) {
    if (step_ >= settings_.steps || step_in_progress_) return;
    if (settings_.external && static_cast<uint64_t>(version_) + settings_.max_staleness < step_) return;
    start_step(context);
  }

  // What PolicyWeights carry: the embedded policy's parameters, or the served policy's description.
  std::string weights_bytes() const {
    return settings_.external ? training::served_policy_json(served_) : policy_.serialize();
  }

  void load_tasks() {
    auto catalog = kernels::TaskCatalog::load(settings_.tasks_dir);
    if (!catalog) throw std::runtime_error("task catalog: " + catalog.error().describe());
    catalog_ = std::move(*catalog);
    auto selection = select_tasks(catalog_, settings_.tasks, settings_.device,
                                  settings_.embedded_generator ? embedded_policy_renders() : GeneratorCheck{});
    if (!selection) throw std::runtime_error(selection.error().describe());
    tasks_ = std::move(selection->tasks);
    if (!selection->other_device.empty()) {
      std::string skipped;
      for (const auto& name : selection->other_device) skipped += (skipped.empty() ? "" : ", ") + name;
      log::info() << "learner: experiment.tasks is all: skipping " << selection->other_device.size()
                  << " tasks without " << kernels::device_name(settings_.device)
                  << " shapes or that the Generator cannot write: " << skipped;
    }
  }

  void restore_or_initialise(const std::string& run_dir) {
    run_dir_ = run_dir;
    auto state = schedule::read_checkpoint_state(run_dir);
    if (!state) throw std::runtime_error(state.error().describe());
    if (!state->has_value()) {
      if (!settings_.init_policy.empty()) start_from(settings_.init_policy);
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

  // A warm start: the latest policy of another run (experiment.init_policy), checked at load to
  // hold a checkpoint. A policy of another shape (another device's space) is a fault of the
  // experiment that the load names.
  void start_from(const std::string& other_run) {
    auto state = schedule::read_checkpoint_state(other_run);
    if (!state || !state->has_value())
      throw std::runtime_error("experiment.init_policy '" + other_run + "' holds no policy checkpoint");
    auto bytes = schedule::read_policy_version(other_run, (*state)->version);
    if (!bytes) throw std::runtime_error("experiment.init_policy: " + bytes.error().describe());
    if (auto loaded = policy_.load(*bytes); !loaded)
      throw std::runtime_error("experiment.init_policy '" + other_run + "': " + loaded.error().message);
    log::info() << "learner: starting from the policy of " << other_run << " (version " << (*state)->version
                << ", after " << (*state)->step << " steps)";
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
    const std::string bytes = weights_bytes();
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
    step_in_progress_ = true;
    step_started_ms_ = context.now_unix_ms();
    rollouts_.clear();
    awaiting_advantages_ = false;
    received_ = 0;
    size_t next_generator = 0;
    for (size_t index : tasks_of_step(tasks_.size(), settings_.tasks_per_step, settings_.seed, step_)) {
      const kernels::Task* task = tasks_[index];
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
      send_weights(context, name, weights_bytes());
      for (auto& rollout : rollouts_) {
        if (rollout.trajectory || rollout.generator != restarted) continue;
        rollout.generator = (rollout.generator + 1) % generators_.size();
        send_rollout(context, rollout);
      }
    }
    if (name == destination(context, "oracle") && awaiting_advantages_) send_advantage_request(context);
    if (name == destination(context, "archivist")) {
      send_weights(context, name, weights_bytes());
      for (const auto& report : reports_) send_report(context, report);
    }
  }

  void on_advantages(runtime::ActorContext& context, msg::Advantages::Reader advantages) {
    if (!awaiting_advantages_ || advantages.getStep() != step_) return;
    awaiting_advantages_ = false;
    TurnValues by_turn;
    for (auto item : advantages.getItems()) {
      by_turn[{item.getTrajectoryId().cStr(), item.getTurn()}] = item.getAdvantage();
    }
    TurnValues returns;
    for (auto item : advantages.getItems()) returns[{item.getTrajectoryId().cStr(), item.getTurn()}] = item.getReturn();
    if (settings_.external) {
      finish_external_step(context, by_turn, returns);
      return;
    }
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
    step_in_progress_ = false;
    checkpoint();
    broadcast_weights(context);
    start_step_when_due(context);
  }

  // experiment.learner.backend external: the step's samples go to the archive untrained (the
  // trainer trains from them), turns played more than max_staleness versions behind the current
  // one marked stale; the version stays the trainer's.
  void finish_external_step(runtime::ActorContext& context, const TurnValues& advantages, const TurnValues& returns) {
    // A version reported before the step's last answer came back counts for its staleness.
    take_policy_reports(context);
    record_outcomes(advantages, returns);
    UpdateStats stats;
    for (auto& rollout : rollouts_) {
      auto trajectory = rollout.trajectory->getRoot<msg::Trajectory>();
      const bool stale = static_cast<uint64_t>(trajectory.getPolicyVersion()) + settings_.max_staleness < version_;
      for (auto turn : trajectory.getTurns()) {
        // record_outcomes() says rollback where the embedded update would have run: not here.
        const bool has_advantage = std::string_view(turn.getRejectedBy().cStr()) != kNoAdvantage;
        turn.setRejectedBy(stale ? kStale : has_advantage ? "" : kNoAdvantage);
        if (stale) ++stats.selection.stale_rejected;
      }
    }
    send_samples(context);
    report_and_record(context, stats);
    ++step_;
    step_in_progress_ = false;
    reports_board_->set_steps_done(step_);
    checkpoint();
    start_step_when_due(context);
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
  void record_outcomes(const TurnValues& advantages, const TurnValues& returns) {
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

  UpdateStats update(const TurnValues& advantages) {
    std::vector<StepTrajectory> trajectories;
    for (auto& rollout : rollouts_) trajectories.push_back({rollout.id, rollout.trajectory->getRoot<msg::Trajectory>()});
    UpdateStats stats;
    const auto tensors = step_batch(trajectories, advantages, policy_, settings_, version_, stats.selection);
    run_epochs(tensors, stats);
    return stats;
  }

  // experiment.ppo_epochs epochs of the clipped objective, stopped early (before the optimizer
  // step) when the approximate KL to the policy before the update exceeds kl_max.
  void run_epochs(const std::vector<FamilyTensors>& tensors, UpdateStats& stats) {
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
    summary.prs_rejected = stats.selection.prs_rejected;
    summary.mrs_rejected = stats.selection.mrs_rejected;
    summary.mrs_vetoed = stats.selection.mrs_vetoed;
    summary.stale_rejected = stats.selection.stale_rejected;
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
  std::unique_ptr<PolicyReports> reports_board_;  // external: the trainer's reports
  std::unique_ptr<runtime::http::HttpServer> policy_server_;
  training::ServedPolicy served_;  // external: the current version as reported
  bool step_in_progress_ = false;
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
