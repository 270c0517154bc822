#include "actors/generator/generator_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include <capnp/message.h>

#include <future>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "kernels/schedule/problem.h"
#include "kernels/schedule/render.h"
#include "actors/generator/candidate_resends.h"
#include "actors/generator/compile_ahead.h"
#include "actors/generator/finished_trajectories.h"
#include "actors/generator/llm/llm_settings.h"
#include "actors/generator/llm_generator_actor.h"
#include "actors/generator/turn_outcome.h"
#include "base/fnv1a.h"
#include "runtime/log.h"
#include "training/candidate_trace.h"

namespace drk::generator {
namespace {

using schedule::Choice;
using schedule::PreviousTurn;
using schedule::Problem;
using schedule::Sampled;

// The timer that looks at the compiles in flight: a worker thread cannot wake the actor, so it
// looks every kCompilePollMs while any compile runs.
constexpr uint64_t kCompilePollToken = std::numeric_limits<uint64_t>::max();
constexpr std::chrono::milliseconds kCompilePollMs{10};

// One decided turn, as it goes into the Trajectory.
struct RecordedTurn {
  std::string candidate_id;
  std::vector<float> observation;
  Sampled sampled;
  TurnOutcome outcome;
};

// A trajectory in progress: its request, its RNG, the turns done and the candidate in flight.
struct Rollout {
  std::string id;
  uint32_t step = 0;
  uint32_t sample_index = 0;
  uint32_t turns = 1;
  uint32_t policy_version = 0;
  std::unique_ptr<capnp::MallocMessageBuilder> task;  // the request's msg::Task, owned
  std::optional<Problem> problem;
  std::mt19937_64 rng;
  std::optional<PreviousTurn> previous;
  std::vector<RecordedTurn> done;
  // The candidate in flight (turn done.size() + 1).
  RecordedTurn pending;
  std::string source;
  // compile_ahead: the compile of `source`, sent with the candidate once it is done.
  std::optional<CompileAhead::Compile> compile;
  bool sent = false;  // the candidate in flight went out at least once
  uint64_t timer_token = 0;

  msg::Task::Reader task_reader() { return task->getRoot<msg::Task>().asReader(); }
  uint32_t turn() const { return static_cast<uint32_t>(done.size()) + 1; }
};

// experiment.device: the device the run evaluates on, whose scheduling space the policy serves
// (the Learner reads the same key and builds the same network).
schedule::Device experiment_device(const YAML::Node& experiment) {
  if (!experiment["device"]) return schedule::Device::cpu;
  auto device = schedule::parse_device(experiment["device"].as<std::string>());
  if (!device) throw std::runtime_error("experiment.device: " + device.error().message);
  return *device;
}

class GeneratorActor final : public runtime::Actor {
 public:
  explicit GeneratorActor(const runtime::ActorSpec& spec)
      : seed_(spec.experiment["seed"] ? spec.experiment["seed"].as<uint64_t>() : 1),
        index_(spec.index),
        compile_ahead_(spec.experiment),
        policy_(seed_, experiment_device(spec.experiment)),
        resends_(eval_timeout(spec.experiment)) {}

  void on_start(runtime::ActorContext& context) override {
    load_checkpoint(context.spec().run_dir);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (const auto weights = runtime::payload_of<msg::PolicyWeights>(envelope)) {
      on_weights(*weights);
    } else if (const auto request = runtime::payload_of<msg::RolloutRequest>(envelope)) {
      on_request(context, *request);
    } else if (const auto feedback = runtime::payload_of<msg::Feedback>(envelope)) {
      on_feedback(context, *feedback);
    } else if (another_actor_restarted(context, envelope)) {
      for (auto& [id, rollout] : rollouts_) send_candidate(context, rollout);
    }
  }

  void on_timer(runtime::ActorContext& context, uint64_t token) override {
    if (token == kCompilePollToken) {
      poll_compiles(context);
      return;
    }
    if (auto* rollout = resends_.due_rollout(token, rollouts_)) send_candidate(context, *rollout);
  }

 private:
  void load_checkpoint(const std::string& run_dir) {
    if (run_dir.empty()) return;
    auto state = schedule::read_checkpoint_state(run_dir);
    if (!state || !state->has_value()) return;
    auto bytes = schedule::read_policy_version(run_dir, (*state)->version);
    if (!bytes) return;
    if (policy_.load(*bytes).ok()) policy_version_ = (*state)->version;
  }

  void poll_compiles(runtime::ActorContext& context) {
    compile_poll_scheduled_ = false;
    for (auto& [id, rollout] : rollouts_) {
      if (!rollout.compile || rollout.sent) continue;
      if (CompileAhead::done(*rollout.compile)) send_candidate(context, rollout);
    }
    schedule_compile_poll(context);
  }

  void schedule_compile_poll(runtime::ActorContext& context) {
    if (compile_poll_scheduled_) return;
    for (const auto& [id, rollout] : rollouts_) {
      if (rollout.compile && !rollout.sent) {
        compile_poll_scheduled_ = true;
        context.start_timer(kCompilePollMs, kCompilePollToken);
        return;
      }
    }
  }

  // What the policy renders: CUDA for the GPU's space, C++ for the CPU's.
  msg::Language candidate_language() const {
    return policy_.device() == schedule::Device::cuda ? msg::Language::CUDA : msg::Language::CPP;
  }

  void on_weights(msg::PolicyWeights::Reader weights) {
    if (weights.getVersion() < policy_version_) return;
    const auto parameters = weights.getParameters();
    const std::string_view bytes(reinterpret_cast<const char*>(parameters.begin()), parameters.size());
    // Weights that do not load leave the current policy in place: a stale policy only costs
    // sample efficiency, and the Learner's next broadcast replaces it.
    if (policy_.load(bytes).ok()) policy_version_ = weights.getVersion();
  }

  void on_request(runtime::ActorContext& context, msg::RolloutRequest::Reader request) {
    const std::string id = request.getTrajectoryId().cStr();
    if (finished_.send_again(context, id) || rollouts_.count(id)) return;
    finished_.forget_old_steps(request.getStep());

    Rollout& rollout = rollouts_[id];
    rollout.id = id;
    rollout.step = request.getStep();
    rollout.sample_index = request.getSampleIndex();
    rollout.turns = std::max<uint32_t>(request.getTurns(), 1);
    rollout.policy_version = policy_version_;
    rollout.task = std::make_unique<capnp::MallocMessageBuilder>();
    rollout.task->setRoot(request.getTask());
    const uint64_t id_hash = fnv1a_64(id);
    std::seed_seq seed{static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32), index_,
                       static_cast<uint32_t>(id_hash), static_cast<uint32_t>(id_hash >> 32)};
    rollout.rng.seed(seed);
    auto problem = schedule::problem_from_task(rollout.task_reader());
    if (!problem || problem->device != policy_.device()) {
      // A task this policy cannot describe, or one evaluated on another device than the space
      // the policy serves, ends at once, empty: the Learner's step goes on.
      if (problem) {
        log::warn() << "generator: task '" << problem->task << "' of trajectory " << id << " is evaluated on "
                    << schedule::device_name(problem->device) << ", but experiment.device is "
                    << schedule::device_name(policy_.device())
                    << ": the trajectory ends empty (set experiment.device to the run's device)";
      }
      finish(context, rollout);
      return;
    }
    rollout.problem = std::move(*problem);
    start_turn(context, rollout);
  }

  void start_turn(runtime::ActorContext& context, Rollout& rollout) {
    // A turn whose schedule does not render (malformed task parameters) is recorded with no
    // reward and the trajectory moves on.
    while (rollout.done.size() < rollout.turns) {
      RecordedTurn& turn = rollout.pending;
      turn = RecordedTurn{};
      turn.candidate_id = rollout.id + "/t" + std::to_string(rollout.turn());
      turn.observation = schedule::observe(*rollout.problem, static_cast<int>(rollout.turn()),
                                           static_cast<int>(rollout.turns), rollout.previous);
      std::optional<Choice> previous_choice;
      if (rollout.previous) previous_choice = rollout.previous->choice;
      turn.sampled = policy_.sample(rollout.problem->family, turn.observation, previous_choice, rollout.rng);
      auto source = schedule::render(*rollout.problem, turn.sampled.choice);
      if (source) {
        rollout.source = std::move(*source);
        rollout.sent = false;
        rollout.compile = compile_ahead_.submit(context, candidate_language(), rollout.source);
        if (rollout.compile) {
          schedule_compile_poll(context);
        } else {
          send_candidate(context, rollout);
        }
        return;
      }
      record(rollout, PreviousTurn{turn.sampled.choice, false, false, false, 0.0, 0.0},
             unevaluated_outcome(rollout.problem->device == schedule::Device::cuda));
    }
    finish(context, rollout);
  }

  void send_candidate(runtime::ActorContext& context, Rollout& rollout) {
    if (!rollout.problem || rollout.done.size() >= rollout.turns) return;
    // A candidate still compiling is sent when its compile is done (poll_compiles).
    if (rollout.compile && !CompileAhead::done(*rollout.compile)) return;
    capnp::MallocMessageBuilder compiled;
    const bool ship =
        rollout.compile &&
        compile_ahead_.pack(context, candidate_language(), *rollout.compile, rollout.pending.candidate_id, compiled);
    const auto task = rollout.task_reader();
    const RecordedTurn& turn = rollout.pending;
    const schedule::Choice& choice = turn.sampled.choice;
    const auto family_knobs = schedule::knobs(choice.family, choice.device);
    runtime::SendOptions traced;
    traced.trace_id = training::candidate_trace_id(turn.candidate_id);
    // A failed send (busy, unknown recipient) is retried by the deadline below.
    (void)context.send(first_member(context, "oracle"), [&](msg::Envelope::Builder envelope) {
      auto candidate = runtime::init_payload<msg::Candidate>(envelope);
      candidate.setId(turn.candidate_id);
      candidate.setTrajectoryId(rollout.id);
      candidate.setTurn(rollout.turn());
      candidate.setTask(task.getName());
      candidate.setDevice(task.getDevice());
      candidate.setLanguage(candidate_language());
      candidate.setSource(rollout.source);
      candidate.setPolicyVersion(rollout.policy_version);
      candidate.setGenerator(context.self());
      candidate.setStep(rollout.step);
      if (ship) candidate.setCompiled(compiled.getRoot<msg::CompiledArtifact>().asReader());
      auto schedule = candidate.initSchedule();
      schedule.setFamily(std::string(schedule::family_name(choice.family)));
      auto decisions = schedule.initDecisions(static_cast<unsigned>(family_knobs.size()));
      for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
        auto decision = decisions[static_cast<unsigned>(knob)];
        decision.setKnob(family_knobs[knob].name);
        decision.setOption(turn.sampled.decisions[knob]);
        const bool keep = turn.sampled.decisions[knob] ==
                          schedule::keep_decision(choice.family, choice.device, static_cast<int>(knob));
        decision.setValue((keep ? "keep=" : "") + choice.value(static_cast<int>(knob)));
        decision.setLogprob(turn.sampled.logprobs[knob]);
      }
    }, traced);
    rollout.sent = true;
    rollout.timer_token = resends_.start(context, rollout.id);
  }

  void on_feedback(runtime::ActorContext& context, msg::Feedback::Reader feedback) {
    const std::string candidate_id = feedback.getCandidateId().cStr();
    const auto slash = candidate_id.rfind("/t");
    if (slash == std::string::npos) return;
    auto found = rollouts_.find(candidate_id.substr(0, slash));
    if (found == rollouts_.end()) return;
    Rollout& rollout = found->second;
    if (!rollout.problem || rollout.pending.candidate_id != candidate_id) return;
    rollout.timer_token = 0;
    const TurnOutcome outcome = turn_outcome(feedback, rollout.problem->device == schedule::Device::cuda);
    record(rollout,
           PreviousTurn{rollout.pending.sampled.choice, outcome.compiled, outcome.correct, outcome.honest,
                        outcome.speedup, outcome.reward},
           outcome);
    start_turn(context, rollout);
  }

  void record(Rollout& rollout, const PreviousTurn& previous, const TurnOutcome& outcome) {
    RecordedTurn turn = std::move(rollout.pending);
    turn.outcome = outcome;
    rollout.done.push_back(std::move(turn));
    rollout.previous = previous;
    rollout.pending = RecordedTurn{};
  }

  void finish(runtime::ActorContext& context, Rollout& rollout) {
    auto trajectory = finished_.begin(rollout.id, rollout.step, rollout.task_reader().getName(),
                                      rollout.sample_index, rollout.policy_version);
    auto turns = trajectory.initTurns(static_cast<unsigned>(rollout.done.size()));
    for (size_t index = 0; index < rollout.done.size(); ++index) {
      const RecordedTurn& done = rollout.done[index];
      auto turn = turns[static_cast<unsigned>(index)];
      turn.setCandidateId(done.candidate_id);
      turn.setFamily(std::string(schedule::family_name(done.sampled.choice.family)));
      auto observation = turn.initObservation(static_cast<unsigned>(done.observation.size()));
      for (size_t at = 0; at < done.observation.size(); ++at) {
        observation.set(static_cast<unsigned>(at), done.observation[at]);
      }
      auto actions = turn.initActions(static_cast<unsigned>(done.sampled.decisions.size()));
      auto logprobs = turn.initActionLogprobs(static_cast<unsigned>(done.sampled.logprobs.size()));
      for (size_t knob = 0; knob < done.sampled.decisions.size(); ++knob) {
        actions.set(static_cast<unsigned>(knob), done.sampled.decisions[knob]);
        logprobs.set(static_cast<unsigned>(knob), done.sampled.logprobs[knob]);
      }
      write_outcome(done.outcome, turn);
    }
    const std::string id = rollout.id;
    finished_.finish(context, id);
    rollouts_.erase(id);
  }

  const uint64_t seed_;
  const uint32_t index_;
  CompileAhead compile_ahead_;
  schedule::Policy policy_;
  bool compile_poll_scheduled_ = false;
  uint32_t policy_version_ = 0;
  std::map<std::string, Rollout> rollouts_;
  FinishedTrajectories finished_;
  CandidateResends resends_;
};

}  // namespace

std::unique_ptr<runtime::Actor> make_generator_actor(const runtime::ActorSpec& spec) {
  if (uses_llm_backend(spec.experiment)) return make_llm_generator_actor(spec);
  return std::make_unique<GeneratorActor>(spec);
}

std::vector<runtime::ExperimentKey> generator_experiment_keys() {
  std::vector<runtime::ExperimentKey> keys = {{"seed", runtime::ValueKind::integer, "1"},
                                              {"eval_timeout_s", runtime::ValueKind::number, "60"},
                                              {"compile_ahead", runtime::ValueKind::flag, "false"},
                                              {"eval.compile_workers", runtime::ValueKind::integer, "2", {}, 1},
                                              {"device", runtime::ValueKind::text, "cpu", {"cpu", "cuda"}}};
  for (auto& key : llm_experiment_keys()) keys.push_back(std::move(key));
  return keys;
}

Status generator_experiment_check(const YAML::Node& experiment) { return llm_experiment_check(experiment); }

}  // namespace drk::generator
