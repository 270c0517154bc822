#include "actors/generator/llm_generator_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include <capnp/message.h>

#include <algorithm>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "actors/generator/candidate_resends.h"
#include "actors/generator/compile_ahead.h"
#include "actors/generator/finished_trajectories.h"
#include "actors/generator/llm/code_block.h"
#include "actors/generator/llm/llm_settings.h"
#include "actors/generator/llm/openai_client.h"
#include "actors/generator/llm/prompt_builder.h"
#include "actors/generator/llm/prompt_templates.h"
#include "actors/generator/llm/task_brief.h"
#include "actors/generator/turn_outcome.h"
#include "judging/python_static_check.h"
#include "runtime/log.h"
#include "training/served_policy.h"
#include "training/candidate_trace.h"

namespace drk::generator {
namespace {

// The timer that looks at the answers awaited and the compiles in flight: neither the client's
// thread nor a compile worker can wake the actor, so it looks every kPollMs while any is pending.
constexpr uint64_t kPollToken = std::numeric_limits<uint64_t>::max();
constexpr std::chrono::milliseconds kPollMs{10};

// One played turn, as it goes into the Trajectory.
struct LlmTurn {
  std::string candidate_id;
  Conversation prompt_added;  // the messages this turn's request added to the previous one's
  std::string answer;         // the model's whole answer ("" when the server gave none)
  uint32_t policy_version = 0;  // the version whose model was asked
  std::vector<float> token_logprobs;
  TurnOutcome outcome;
};

struct LlmRollout {
  std::string id;
  uint32_t step = 0;
  uint32_t sample_index = 0;
  uint32_t turns = 1;
  uint32_t policy_version = 0;
  std::unique_ptr<capnp::MallocMessageBuilder> task;  // the request's msg::Task, owned
  bool kernelbench = false;
  Conversation conversation;
  size_t messages_asked = 0;  // the conversation's messages that a request has already sent
  std::vector<LlmTurn> done;
  LlmTurn pending;  // its outcome: unevaluated_outcome() until its Feedback comes
  std::optional<std::shared_future<Result<Completion>>> answer;  // the model's answer, awaited
  std::shared_ptr<OpenAiClient> answering;                       // the client asked, kept while awaited
  std::string source;                                            // the candidate in flight
  msg::Language language = msg::Language::CPP;                   // the candidate's
  // compile_ahead: the compile of `source`, sent with the candidate once it is done.
  std::optional<CompileAhead::Compile> compile;
  bool sent = false;  // the candidate in flight went out at least once
  uint64_t timer_token = 0;

  msg::Task::Reader task_reader() { return task->getRoot<msg::Task>().asReader(); }
  uint32_t turn() const { return static_cast<uint32_t>(done.size()) + 1; }
  bool awaiting_feedback() const { return !source.empty(); }
};

class LlmGeneratorActor final : public runtime::Actor {
 public:
  explicit LlmGeneratorActor(const runtime::ActorSpec& spec)
      : settings_(settings_of(spec.experiment)),
        templates_(templates_of(settings_)),
        compile_ahead_(spec.experiment),
        resends_(eval_timeout(spec.experiment)) {}

  void on_start(runtime::ActorContext&) override {
    auto key = load_api_key(settings_);
    if (!key) throw std::runtime_error(key.error().message);
    api_key_ = std::move(*key);
    client_ = std::make_shared<OpenAiClient>(settings_, api_key_);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (const auto request = runtime::payload_of<msg::RolloutRequest>(envelope)) {
      on_request(context, *request);
    } else if (const auto feedback = runtime::payload_of<msg::Feedback>(envelope)) {
      on_feedback(context, *feedback);
    } else if (const auto weights = runtime::payload_of<msg::PolicyWeights>(envelope)) {
      on_served_policy(context, *weights);
    } else if (another_actor_restarted(context, envelope)) {
      for (auto& [id, rollout] : rollouts_) send_candidate(context, rollout);
    }
  }

  void on_timer(runtime::ActorContext& context, uint64_t token) override {
    if (token == kPollToken) {
      poll(context);
      return;
    }
    if (auto* rollout = resends_.due_rollout(token, rollouts_)) send_candidate(context, *rollout);
  }

 private:
  static LlmSettings settings_of(const YAML::Node& experiment) {
    auto settings = llm_settings(experiment);
    if (!settings) throw std::runtime_error(settings.error().message);
    return std::move(*settings);
  }

  static PromptTemplates templates_of(const LlmSettings& settings) {
    auto templates = load_prompt_templates(settings.prompts_dir);
    if (!templates) throw std::runtime_error(templates.error().message);
    return std::move(*templates);
  }

  // A version reported by an external trainer (learner.backend: external): later turns ask its
  // model and endpoint (the experiment's when it names none) and carry its number. Weights of
  // the embedded policy, or an older version, change nothing.
  void on_served_policy(runtime::ActorContext& context, msg::PolicyWeights::Reader weights) {
    const auto bytes = weights.getParameters();
    const auto served = training::parse_served_policy(
        std::string_view(reinterpret_cast<const char*>(bytes.begin()), bytes.size()));
    if (!served || served->version < policy_version_) return;
    policy_version_ = served->version;
    LlmSettings settings = settings_;
    if (!served->model.empty()) settings.sampling.model = served->model;
    if (!served->endpoint.empty()) {
      auto endpoint = http_client::parse_http_url(served->endpoint);
      if (!endpoint) {
        log::warn() << context.self() << ": policy v" << served->version << "'s endpoint is refused, the previous one "
                    << "serves it: " << endpoint.error().message;
        return;
      }
      settings.endpoint = std::move(*endpoint);
    }
    if (settings.sampling.model != client_settings_.sampling.model ||
        settings.endpoint.base() != client_settings_.endpoint.base()) {
      client_settings_ = settings;
      client_ = std::make_shared<OpenAiClient>(client_settings_, api_key_);
    }
  }

  void on_request(runtime::ActorContext& context, msg::RolloutRequest::Reader request) {
    const std::string id = request.getTrajectoryId().cStr();
    if (finished_.send_again(context, id) || rollouts_.count(id)) return;
    finished_.forget_old_steps(request.getStep());

    LlmRollout& rollout = rollouts_[id];
    rollout.id = id;
    rollout.step = request.getStep();
    rollout.sample_index = request.getSampleIndex();
    rollout.turns = std::max<uint32_t>(request.getTurns(), 1);
    rollout.policy_version = request.getPolicyVersion();
    rollout.task = std::make_unique<capnp::MallocMessageBuilder>();
    rollout.task->setRoot(request.getTask());
    auto brief = task_brief(rollout.task_reader(), settings_.kernelbench_backend);
    if (!brief) {
      // A KernelBench problem whose file cannot be read here: the trajectory ends empty and the
      // Learner's step goes on.
      log::warn() << context.self() << ": trajectory " << id << " ends empty: " << brief.error().describe();
      finish(context, rollout);
      return;
    }
    rollout.kernelbench = brief->kernelbench;
    rollout.conversation = opening_conversation(templates_, *brief);
    start_turn(context, rollout);
  }

  void start_turn(runtime::ActorContext& context, LlmRollout& rollout) {
    if (rollout.done.size() >= rollout.turns) {
      finish(context, rollout);
      return;
    }
    rollout.pending = LlmTurn{};
    rollout.pending.outcome = unevaluated_outcome(rollout.task_reader().getDevice() == msg::Device::CUDA);
    rollout.pending.candidate_id = rollout.id + "/t" + std::to_string(rollout.turn());
    // With the embedded Learner no version is reported: the request's is the policy's.
    rollout.pending.policy_version = std::max(policy_version_, rollout.policy_version);
    rollout.source.clear();
    rollout.pending.prompt_added.assign(rollout.conversation.begin() + static_cast<std::ptrdiff_t>(rollout.messages_asked),
                                        rollout.conversation.end());
    rollout.messages_asked = rollout.conversation.size();
    rollout.answering = client_;
    rollout.answer = client_->submit(rollout.conversation, request_seed(settings_.sampling, rollout.pending.candidate_id));
    schedule_poll(context);
  }

  void poll(runtime::ActorContext& context) {
    poll_scheduled_ = false;
    std::vector<std::string> answered;
    for (auto& [id, rollout] : rollouts_) {
      if (rollout.answer && rollout.answer->wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        answered.push_back(id);
      else if (compiling(rollout) && CompileAhead::done(*rollout.compile))
        send_candidate(context, rollout);
    }
    // Taking an answer may finish its rollout (erased from rollouts_): by id, not by iterator.
    for (const auto& id : answered) {
      if (auto found = rollouts_.find(id); found != rollouts_.end()) take_answer(context, found->second);
    }
    schedule_poll(context);
  }

  // A candidate compiled ahead and not yet sent.
  static bool compiling(const LlmRollout& rollout) { return rollout.compile && !rollout.sent; }

  void schedule_poll(runtime::ActorContext& context) {
    if (poll_scheduled_) return;
    for (const auto& [id, rollout] : rollouts_) {
      if (rollout.answer || compiling(rollout)) {
        poll_scheduled_ = true;
        context.start_timer(kPollMs, kPollToken);
        return;
      }
    }
  }

  void take_answer(runtime::ActorContext& context, LlmRollout& rollout) {
    const Result<Completion> answer = rollout.answer->get();
    rollout.answer.reset();
    rollout.answering.reset();
    if (!answer) {
      // The model's server gave no answer: the conversation stays as it was for the next turn.
      log::warn() << context.self() << ": " << rollout.pending.candidate_id
                  << " has no answer: " << answer.error().describe();
      fail_turn(context, rollout, "no answer", "the model's server gave no answer: " + answer.error().message, false);
      return;
    }
    rollout.pending.token_logprobs = answer->token_logprobs;
    rollout.pending.answer = answer->text;
    rollout.conversation.push_back({"assistant", answer->text});
    auto block = last_code_block(answer->text);
    if (!block) {
      fail_turn(context, rollout, "no candidate", block.error().message, true);
      return;
    }
    rollout.source = std::move(block->code);
    rollout.language = candidate_language(rollout);
    rollout.sent = false;
    rollout.compile = compile_ahead_.submit(context, rollout.language, rollout.source);
    if (rollout.compile)
      schedule_poll(context);
    else
      send_candidate(context, rollout);
  }

  // KernelBench problems get a ModelNew file; our own tasks C++ or CUDA.
  static msg::Language candidate_language(LlmRollout& rollout) {
    if (rollout.kernelbench) return msg::Language::PYTHON;
    return rollout.task_reader().getDevice() == msg::Device::CUDA ? msg::Language::CUDA : msg::Language::CPP;
  }

  // A turn without a candidate: reward 0, and the reason, told to the model when `tell` holds.
  void fail_turn(runtime::ActorContext& context, LlmRollout& rollout, const std::string& status,
                 const std::string& reason, bool tell) {
    rollout.done.push_back(std::move(rollout.pending));
    if (tell && rollout.done.size() < rollout.turns)
      rollout.conversation.push_back(feedback_message(templates_, {rollout.turn(), rollout.turns, status, reason, 0.0}));
    start_turn(context, rollout);
  }

  void send_candidate(runtime::ActorContext& context, LlmRollout& rollout) {
    if (!rollout.awaiting_feedback()) return;
    // A candidate still compiling is sent when its compile is done (poll).
    if (rollout.compile && !CompileAhead::done(*rollout.compile)) return;
    capnp::MallocMessageBuilder compiled;
    const bool ship = rollout.compile && compile_ahead_.pack(context, rollout.language, *rollout.compile,
                                                             rollout.pending.candidate_id, compiled);
    const auto task = rollout.task_reader();
    runtime::SendOptions traced;
    traced.trace_id = training::candidate_trace_id(rollout.pending.candidate_id);
    // A failed send (busy, unknown recipient) is retried by the deadline below.
    (void)context.send(first_member(context, "oracle"), [&](msg::Envelope::Builder envelope) {
      auto candidate = runtime::init_payload<msg::Candidate>(envelope);
      candidate.setId(rollout.pending.candidate_id);
      candidate.setTrajectoryId(rollout.id);
      candidate.setTurn(rollout.turn());
      candidate.setTask(task.getName());
      candidate.setDevice(task.getDevice());
      candidate.setLanguage(rollout.language);
      if (rollout.kernelbench)
        candidate.setPythonBackend(judging::backend_message(*judging::parse_backend(settings_.kernelbench_backend)));
      candidate.setSource(rollout.source);
      if (ship) candidate.setCompiled(compiled.getRoot<msg::CompiledArtifact>().asReader());
      candidate.setPolicyVersion(rollout.pending.policy_version);
      candidate.setGenerator(context.self());
      candidate.setStep(rollout.step);
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
    LlmRollout& rollout = found->second;
    if (!rollout.awaiting_feedback() || rollout.pending.candidate_id != candidate_id) return;
    rollout.timer_token = 0;
    rollout.source.clear();
    rollout.compile.reset();
    rollout.pending.outcome = turn_outcome(feedback, rollout.task_reader().getDevice() == msg::Device::CUDA);
    rollout.done.push_back(std::move(rollout.pending));
    if (rollout.done.size() < rollout.turns) {
      rollout.conversation.push_back(feedback_message(
          templates_, evaluated_turn(rollout.turn(), rollout.turns, feedback.getSummary().cStr(), feedback.getReward())));
    }
    start_turn(context, rollout);
  }

  void finish(runtime::ActorContext& context, LlmRollout& rollout) {
    // A trajectory is as old as its oldest turn, the first (the Learner's staleness bound).
    const uint32_t version = rollout.done.empty() ? rollout.policy_version : rollout.done.front().policy_version;
    auto trajectory = finished_.begin(rollout.id, rollout.step, rollout.task_reader().getName(),
                                      rollout.sample_index, version);
    auto turns = trajectory.initTurns(static_cast<unsigned>(rollout.done.size()));
    for (size_t index = 0; index < rollout.done.size(); ++index) {
      const LlmTurn& done = rollout.done[index];
      auto turn = turns[static_cast<unsigned>(index)];
      turn.setCandidateId(done.candidate_id);
      auto added = turn.initPromptAdded(static_cast<unsigned>(done.prompt_added.size()));
      for (size_t message = 0; message < done.prompt_added.size(); ++message) {
        added[static_cast<unsigned>(message)].setRole(done.prompt_added[message].role);
        added[static_cast<unsigned>(message)].setContent(done.prompt_added[message].content);
      }
      turn.setAnswer(done.answer);
      turn.setModel(settings_.sampling.model);
      auto logprobs = turn.initActionLogprobs(static_cast<unsigned>(done.token_logprobs.size()));
      for (size_t token = 0; token < done.token_logprobs.size(); ++token)
        logprobs.set(static_cast<unsigned>(token), done.token_logprobs[token]);
      write_outcome(done.outcome, turn);
    }
    const std::string id = rollout.id;
    finished_.finish(context, id);
    rollouts_.erase(id);
  }

  const LlmSettings settings_;
  const PromptTemplates templates_;
  std::string api_key_;
  LlmSettings client_settings_ = settings_;  // the current version's model and endpoint
  std::shared_ptr<OpenAiClient> client_;
  uint32_t policy_version_ = 0;  // the newest version reported (learner.backend: external)
  CompileAhead compile_ahead_;
  bool poll_scheduled_ = false;
  std::map<std::string, LlmRollout> rollouts_;
  FinishedTrajectories finished_;
  CandidateResends resends_;
};

}  // namespace

std::unique_ptr<runtime::Actor> make_llm_generator_actor(const runtime::ActorSpec& spec) {
  return std::make_unique<LlmGeneratorActor>(spec);
}

}  // namespace drk::generator
