#include "tools/gateway/engine_task_evaluator.h"

#include <capnp/message.h>

#include <algorithm>

#include "tools/drk/judged_evaluation.h"
#include "tools/gateway/evaluation_profile.h"
#include "tools/gateway/evaluation_result.h"

namespace drk::gateway {

evaluator::Measurement measurement_for(const EvaluateRequest& request, const evaluator::EngineOptions& engine) {
  evaluator::Measurement measurement{engine.trials, engine.max_samples, engine.call_timeout, engine.warmup_calls};
  if (request.num_correct_trials) measurement.trials = static_cast<uint32_t>(*request.num_correct_trials);
  if (request.num_perf_trials) measurement.max_samples = static_cast<uint32_t>(*request.num_perf_trials);
  if (request.timeout)
    measurement.call_timeout = std::max(std::chrono::milliseconds(1),
                                        std::chrono::milliseconds(static_cast<int64_t>(*request.timeout * 1000)));
  if (request.num_warmup) measurement.warmup_calls = static_cast<uint32_t>(*request.num_warmup);
  return measurement;
}

Result<std::unique_ptr<TaskEvaluator>> EngineTaskEvaluator::create(const EngineEvaluatorSettings& settings,
                                                                    size_t worker) {
  EngineEvaluatorSettings own = settings;
  own.engine.python = true;
  own.engine.kernelbench_dir = settings.references->problems_dir();
  own.engine.evaluator_name = "drk serve worker-" + std::to_string(worker);
  auto engine = tools::make_engine(own.engine);
  if (!engine) return engine.error();
  return std::unique_ptr<TaskEvaluator>(new EngineTaskEvaluator(std::move(own), std::move(*engine)));
}

Json EngineTaskEvaluator::evaluate(const EvaluateRequest& request) {
  const auto& weights = settings_.weights;
  const bool needs_gpu = request.backend == judging::Backend::cuda || request.backend == judging::Backend::triton;
  if (needs_gpu && settings_.engine.device != kernels::DeviceKind::cuda)
    return failed_result(request, "unsupported_backend",
                         "backend '" + std::string(judging::backend_name(request.backend)) +
                             "' needs a GPU, and this gateway evaluates on the cpu: send it to a drk serve whose "
                             "topology sets experiment.device: cuda, or submit backend pytorch or cpp here",
                         weights, 0);
  auto task = settings_.references->task_for(request.reference_code);
  if (!task) return failed_result(request, "reference_error", task.error().message, weights, 0);
  evaluator::CandidateInput input;
  input.id = request.task_id;
  input.task = *task;
  input.device = settings_.engine.device;
  input.python = true;
  input.python_backend = request.backend;
  input.source = request.kernel_code;
  const evaluator::Measurement measurement = measurement_for(request, settings_.engine);
  if (auto set = engine_->set_measurement(measurement); !set)
    return failed_result(request, "invalid_request", set.error().message, weights, 0);
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<msg::Verdict>();
  if (auto judged = tools::evaluate_and_judge(*engine_, input, verdict); !judged)
    return failed_result(request, "evaluation_error", judged.error().message, weights, 0);
  Json answer = evaluated_result(request, verdict.asReader(), weights, 0);
  answer["metadata"]["measured"] = {{"trials", measurement.trials},
                                    {"max_timed_samples", measurement.max_samples},
                                    {"call_timeout_s", measurement.call_timeout.count() / 1000.0},
                                    {"warmup_calls", measurement.warmup_calls}};
  if (request.enable_profiling) answer["metadata"]["profile"] = evaluation_profile_json(verdict.getResult());
  return answer;
}

}  // namespace drk::gateway
