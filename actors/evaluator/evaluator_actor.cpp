#include "actors/evaluator/evaluator_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include <deque>
#include <map>
#include <stdexcept>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/evaluator/sandbox_process.h"
#include "kernels/compile/compiled_artifact.h"

namespace drk::evaluator {
namespace {

constexpr size_t kRecentResults = 64;
constexpr uint64_t kServeNextTimer = 1;

// A held EvalRequest: its envelope's ids and the candidate, copied out of the received frame.
struct HeldRequest {
  uint64_t correlation_id = 0;
  uint64_t trace_id = 0;
  kj::Array<capnp::word> candidate;  // a flat msg::Candidate
  double best_known_speedup = 0;     // EvalRequest.bestKnownSpeedup
};

class EvaluatorActor final : public runtime::Actor {
 public:
  explicit EvaluatorActor(runtime::ActorSpec spec) : spec_(std::move(spec)) {}

  void on_start(runtime::ActorContext& context) override {
    auto options = engine_options_for(spec_);
    if (!options) throw std::runtime_error("evaluator " + spec_.name + ": " + options.error().describe());
    // Without the NVIDIA driver every CUDA candidate would fail to load, one by one: stop instead.
    if (options->device == kernels::DeviceKind::cuda && !nvidia_driver_present())
      throw std::runtime_error("evaluator " + spec_.name +
                               ": experiment.device is cuda but this machine has no NVIDIA driver (/dev/nvidiactl "
                               "is absent): run it on the GPU machine, or place the Evaluator on a GPU node "
                               "(docs/topology.md), or --set experiment.device=cpu");
    auto slots = evaluator_slots_for(spec_);
    if (!slots) throw std::runtime_error("evaluator " + spec_.name + ": " + slots.error().describe());
    slots_ = *slots;
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
    if (const auto request = runtime::payload_of<msg::EvalRequest>(envelope)) {
      hold(context, envelope, *request);
    } else if (envelope.getBody().isControl()) {
      auto control = envelope.getBody().getControl();
      // An Oracle that restarted lost its credits; news of this Evaluator's own restart means its
      // node came back and the Oracle forgot it: announce it either way.
      if (control.isPeerRestarted() && (is_oracle(context, control.getPeerRestarted()) ||
                                        context.self() == control.getPeerRestarted().cStr())) {
        send_ready(context);
      }
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
      auto ready = runtime::init_payload<msg::EvaluatorReady>(envelope);
      ready.setIncarnation(spec_.incarnation);
      ready.setSlots(slots_);
    });
  }

  void on_timer(runtime::ActorContext& context, uint64_t token) override {
    if (token != kServeNextTimer) return;
    serve_scheduled_ = false;
    if (held_.empty()) return;
    HeldRequest request = std::move(held_.front());
    held_.pop_front();
    capnp::FlatArrayMessageReader reader(request.candidate);
    serve(context, request, reader.getRoot<msg::Candidate>());
    schedule_serving(context);
  }

  void hold(runtime::ActorContext& context, msg::Envelope::Reader envelope, msg::EvalRequest::Reader request) {
    const auto candidate = request.getCandidate();
    // Compile ahead (or file the object it carries) what this engine can evaluate and has not
    // answered yet; anything else is answered (or refused) when its turn comes.
    const auto device = engine_->options().device == kernels::DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU;
    const auto language = device == msg::Device::CUDA ? msg::Language::CUDA : msg::Language::CPP;
    if (candidate.getDevice() == device && candidate.getLanguage() == language &&
        recent_.find(candidate.getId().cStr()) == recent_.end())
      engine_->compile_ahead(candidate);
    capnp::MallocMessageBuilder copy;
    copy.setRoot(candidate);
    held_.push_back(HeldRequest{envelope.getCorrelationId(), envelope.getTraceId(), capnp::messageToFlatArray(copy),
                                request.getBestKnownSpeedup()});
    schedule_serving(context);
  }

  void schedule_serving(runtime::ActorContext& context) {
    if (serve_scheduled_ || held_.empty()) return;
    serve_scheduled_ = true;
    context.start_timer(std::chrono::milliseconds(0), kServeNextTimer);
  }

  void serve(runtime::ActorContext& context, const HeldRequest& request, msg::Candidate::Reader candidate) {
    std::string id = candidate.getId();
    auto cached = recent_.find(id);
    if (cached == recent_.end()) {
      capnp::MallocMessageBuilder message;
      auto result = message.initRoot<msg::EvalResult>();
      const auto status = evaluate_traced(context, request, candidate, result);
      if (!status) {
        // Not evaluable: answer anyway, so that the Oracle's credit and the trajectory move on.
        capnp::MallocMessageBuilder fresh, stripped;
        auto refused = fresh.initRoot<msg::EvalResult>();
        refused.setCandidate(compile::without_object(candidate, stripped).asReader());
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
    options.correlation_id = request.correlation_id;
    options.trace_id = request.trace_id;
    (void)context.send(first_of_role(context, "verifier"),
                       [&](msg::Envelope::Builder out) { runtime::set_payload<msg::EvalResult>(out, result); }, options);
    send_ready(context);
  }

  // The engine's evaluate(), its steps recorded as spans on this Evaluator's sandbox track and
  // the whole as an "evaluate" span on its own, under the request's trace id (docs/traces.md).
  Status evaluate_traced(runtime::ActorContext& context, const HeldRequest& request, msg::Candidate::Reader candidate,
                         msg::EvalResult::Builder result) {
    const std::vector<runtime::trace::SpanArg> args{{"candidate", candidate.getId().cStr()},
                                                    {"task", candidate.getTask().cStr()}};
    const std::string sandbox_track = spec_.name + "/sandbox";
    engine_->set_step_observer([&](const char* step, auto began, auto ended) {
      auto step_args = args;
      if (const pid_t pid = engine_->sandbox_pid(); pid > 0) step_args.push_back({"sandbox_pid", std::to_string(pid)});
      context.record_span({sandbox_track, step, began, ended, 0, std::move(step_args)});
    });
    const auto began = std::chrono::steady_clock::now();
    Status status = engine_->evaluate(candidate, result, request.best_known_speedup);
    engine_->set_step_observer(nullptr);
    auto evaluate_args = args;
    evaluate_args.push_back({"outcome", !status ? "not evaluable: " + status.error().message
                                        : result.getCorrect() ? "correct" : "not correct"});
    context.record_span(
        {spec_.name, "evaluate", began, std::chrono::steady_clock::now(), request.trace_id, std::move(evaluate_args)});
    return status;
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
  uint32_t slots_ = 1;
  std::deque<HeldRequest> held_;
  bool serve_scheduled_ = false;
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
        options.compile_workers = eval["compile_workers"].as<uint32_t>(options.compile_workers);
        options.sandbox.gpu_memory_limit_bytes = eval["gpu_memory_limit_mb"].as<uint64_t>(0) << 20;
        options.sandbox.memory_bytes = eval["sandbox_memory_mb"].as<uint64_t>(0) << 20;
        options.sandbox_spares = eval["sandbox_spares"].as<uint32_t>(options.sandbox_spares);
        options.allow_reference_blas = eval["allow_reference_blas"].as<bool>(options.allow_reference_blas);
        options.energy_min_ms = eval["energy_min_ms"].as<uint32_t>(options.energy_min_ms);
        options.hardware_metrics = eval["hardware_metrics"].as<bool>(options.hardware_metrics);
        options.device_resident = eval["device_resident"].as<bool>(options.device_resident);
        options.timing_sets = eval["timing_sets"].as<uint32_t>(options.timing_sets);
        if (eval["launch_latency"]) {
          auto launch = parse_launch_latency(eval["launch_latency"].as<std::string>());
          if (!launch) return make_error(Errc::invalid_argument, "experiment.eval.launch_latency: " + launch.error().message);
          options.hide_launch_latency = *launch;
        }
        if (eval["shapes"]) {
          auto shapes = kernels::parse_device(eval["shapes"].as<std::string>());
          if (!shapes)
            return make_error(Errc::invalid_argument, "experiment.eval.shapes: " + shapes.error().message +
                                                          " (expected cpu, the scaled shapes, or cuda, KernelBench's)");
          options.shapes = *shapes;
        }
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(Errc::invalid_argument, "experiment.eval of the topology is malformed: " + e.msg +
                                                  " (expected {trials: N, timing_budget_ms: MS, max_threads: N, "
                                                  "compile_workers: N, slots: N, gpu_memory_limit_mb: MB, "
                                                  "energy_min_ms: MS, hardware_metrics: BOOL, shapes: cpu|cuda, "
                                                  "device_resident: BOOL, timing_sets: N, "
                                                  "launch_latency: included|hidden})");
  }
  if (options.trials < 1 || options.max_threads < 1 || options.timing_budget_ms < 0 || options.compile_workers < 1 ||
      options.timing_sets < 1)
    return make_error(Errc::invalid_argument, "experiment.eval needs trials >= 1, max_threads >= 1, "
                                              "timing_budget_ms >= 0, compile_workers >= 1, timing_sets >= 1");
  return options;
}

Result<uint32_t> evaluator_slots_for(const runtime::ActorSpec& spec) {
  uint32_t slots = 2;
  try {
    if (spec.experiment && spec.experiment.IsMap())
      if (YAML::Node eval = spec.experiment["eval"]) slots = eval["slots"].as<uint32_t>(slots);
  } catch (const YAML::Exception& e) {
    return make_error(Errc::invalid_argument, "experiment.eval.slots of the topology is malformed: " + e.msg +
                                                  " (expected a whole number >= 1)");
  }
  if (slots < 1) return make_error(Errc::invalid_argument, "experiment.eval.slots must be at least 1");
  return slots;
}

std::unique_ptr<runtime::Actor> make_evaluator_actor(const runtime::ActorSpec& spec) {
  return std::make_unique<EvaluatorActor>(spec);
}

Status evaluator_experiment_check(const YAML::Node& experiment) {
  runtime::ActorSpec spec;
  spec.experiment = experiment;
  if (auto options = engine_options_for(spec); !options) return options.error();
  if (auto slots = evaluator_slots_for(spec); !slots) return slots.error();
  return {};
}

std::vector<runtime::ExperimentKey> evaluator_experiment_keys() {
  return {{"device", runtime::ValueKind::text, "cpu", {"cpu", "cuda"}},
          {"tasks_dir", runtime::ValueKind::text, "kernels/tasks"},
          {"eval.trials", runtime::ValueKind::integer, "5", {}, 1},
          {"eval.timing_budget_ms", runtime::ValueKind::number, "100"},
          {"eval.max_threads", runtime::ValueKind::integer, "1", {}, 1},
          {"eval.compile_workers", runtime::ValueKind::integer, "2", {}, 1},
          {"eval.slots", runtime::ValueKind::integer, "2", {}, 1},
          {"eval.sandbox_spares", runtime::ValueKind::integer, "1", {}, 1},
          {"eval.sandbox_memory_mb", runtime::ValueKind::integer, "1024"},
          {"eval.allow_reference_blas", runtime::ValueKind::flag, "false"},
          {"eval.gpu_memory_limit_mb", runtime::ValueKind::integer, "0"},
          {"eval.energy_min_ms", runtime::ValueKind::integer, "0"},
          {"eval.hardware_metrics", runtime::ValueKind::flag, "false"},
          {"eval.shapes", runtime::ValueKind::text, "cpu", {"cpu", "cuda"}},
          {"eval.device_resident", runtime::ValueKind::flag, "true"},
          {"eval.timing_sets", runtime::ValueKind::integer, "3", {}, 1},
          {"eval.launch_latency", runtime::ValueKind::text, "included", {"included", "hidden"}},
          // Read by `drk run` at the end (tools/drk/remeasure.h), with the Evaluator's settings.
          {"remeasure", runtime::ValueKind::integer, "0"}};
}

}  // namespace drk::evaluator
