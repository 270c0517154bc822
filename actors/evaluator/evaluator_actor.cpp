#include "actors/evaluator/evaluator_actor.h"

#include <deque>
#include <map>
#include <stdexcept>

#include <capnp/message.h>
#include <capnp/serialize.h>

namespace drk::evaluator {
namespace {

constexpr size_t kRecentResults = 64;

class EvaluatorActor final : public runtime::Actor {
 public:
  explicit EvaluatorActor(runtime::ActorSpec spec) : spec_(std::move(spec)) {}

  void on_start(runtime::ActorContext& context) override {
    auto options = engine_options_for(spec_);
    if (!options) throw std::runtime_error("evaluator " + spec_.name + ": " + options.error().describe());
    std::string tasks_dir = kernels::TaskCatalog::default_directory();
    if (spec_.experiment && spec_.experiment["tasks_dir"]) tasks_dir = spec_.experiment["tasks_dir"].as<std::string>();
    auto catalog = kernels::TaskCatalog::load(tasks_dir);
    if (!catalog) throw std::runtime_error("evaluator " + spec_.name + ": " + catalog.error().describe());
    auto engine = EvaluationEngine::create(std::move(*catalog), std::move(*options));
    if (!engine) throw std::runtime_error("evaluator " + spec_.name + ": " + engine.error().describe());
    engine_ = std::move(*engine);
    send_ready(context);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    auto body = envelope.getBody();
    switch (body.which()) {
      case msg::Envelope::Body::EVAL_REQUEST:
        serve(context, envelope, body.getEvalRequest());
        break;
      case msg::Envelope::Body::CONTROL: {
        auto control = body.getControl();
        // An Oracle that restarted lost its credits; news of this Evaluator's own restart means its
        // node came back and the Oracle forgot it: announce it either way.
        if (control.isPeerRestarted() && (is_oracle(context, control.getPeerRestarted()) ||
                                          context.self() == control.getPeerRestarted().cStr())) {
          send_ready(context);
        }
        break;
      }
      default:
        break;
    }
  }

 private:
  static std::string first_of_role(runtime::ActorContext& context, const char* role) {
    auto members = context.members(role);
    return members.empty() ? std::string(role) : members.front();
  }

  static bool is_oracle(runtime::ActorContext& context, kj::StringPtr name) {
    if (name == "oracle") return true;
    for (const auto& member : context.members("oracle"))
      if (name == member.c_str()) return true;
    return false;
  }

  void send_ready(runtime::ActorContext& context) {
    (void)context.send(first_of_role(context, "oracle"), [&](msg::Envelope::Builder envelope) {
      auto ready = envelope.getBody().initEvaluatorReady();
      ready.setIncarnation(spec_.incarnation);
      ready.setSlots(1);
    });
  }

  void serve(runtime::ActorContext& context, msg::Envelope::Reader envelope, msg::EvalRequest::Reader request) {
    auto candidate = request.getCandidate();
    std::string id = candidate.getId();
    auto cached = recent_.find(id);
    if (cached == recent_.end()) {
      capnp::MallocMessageBuilder message;
      auto result = message.initRoot<msg::EvalResult>();
      if (auto status = engine_->evaluate(candidate, result); !status) {
        // Not evaluable: answer anyway, so that the Oracle's credit and the trajectory move on.
        capnp::MallocMessageBuilder fresh;
        auto refused = fresh.initRoot<msg::EvalResult>();
        refused.setCandidate(candidate);
        refused.setEvaluator(spec_.name);
        refused.setErrorText(status.error().describe());
        remember(id, fresh);
      } else {
        remember(id, message);
      }
      cached = recent_.find(id);
    }
    capnp::FlatArrayMessageReader reader(cached->second);
    auto result = reader.getRoot<msg::EvalResult>();
    runtime::SendOptions options;
    options.correlation_id = envelope.getCorrelationId();
    options.trace_id = envelope.getTraceId();
    (void)context.send(first_of_role(context, "verifier"),
                       [&](msg::Envelope::Builder out) { out.getBody().setEvalResult(result); }, options);
    send_ready(context);
  }

  void remember(const std::string& id, capnp::MessageBuilder& message) {
    recent_[id] = capnp::messageToFlatArray(message);
    order_.push_back(id);
    if (order_.size() > kRecentResults) {
      recent_.erase(order_.front());
      order_.pop_front();
    }
  }

  runtime::ActorSpec spec_;
  std::unique_ptr<EvaluationEngine> engine_;
  std::map<std::string, kj::Array<capnp::word>> recent_;
  std::deque<std::string> order_;
};

}  // namespace

Result<EngineOptions> engine_options_for(const runtime::ActorSpec& spec) {
  EngineOptions options;
  options.evaluator_name = spec.name;
  options.cache_dir = (spec.run_dir.empty() ? std::string(".") : spec.run_dir) + "/compile-cache";
  try {
    const YAML::Node& experiment = spec.experiment;
    if (experiment && experiment.IsMap()) {
      if (experiment["device"]) {
        auto device = kernels::parse_device(experiment["device"].as<std::string>());
        if (!device) return device.error();
        options.device = *device;
      }
      if (YAML::Node eval = experiment["eval"]) {
        options.trials = eval["trials"].as<uint32_t>(options.trials);
        options.timing_budget_ms = eval["timing_budget_ms"].as<double>(options.timing_budget_ms);
        options.max_threads = eval["max_threads"].as<int>(options.max_threads);
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(Errc::invalid_argument, "experiment.eval of the topology is malformed: " + e.msg +
                                                  " (expected {trials: N, timing_budget_ms: MS, max_threads: N})");
  }
  if (options.trials < 1 || options.max_threads < 1 || options.timing_budget_ms < 0)
    return make_error(Errc::invalid_argument, "experiment.eval needs trials >= 1, max_threads >= 1, timing_budget_ms >= 0");
  return options;
}

std::unique_ptr<runtime::Actor> make_evaluator_actor(const runtime::ActorSpec& spec) {
  return std::make_unique<EvaluatorActor>(spec);
}

std::vector<runtime::ExperimentKey> evaluator_experiment_keys() {
  return {{"device", runtime::ValueKind::text, "cpu"},
          {"tasks_dir", runtime::ValueKind::text, "kernels/tasks"},
          {"eval.trials", runtime::ValueKind::integer, "5"},
          {"eval.timing_budget_ms", runtime::ValueKind::number, "100"},
          {"eval.max_threads", runtime::ValueKind::integer, "1"}};
}

}  // namespace drk::evaluator
