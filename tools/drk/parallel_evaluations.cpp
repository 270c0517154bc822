#include "tools/drk/parallel_evaluations.h"

#include <capnp/message.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "actors/evaluator/engine/shared_gpu.h"
#include "base/parallel_for.h"
#include "tools/drk/judged_evaluation.h"

namespace drk::tools {

Status evaluate_in_parallel(const evaluator::EngineOptions& options, size_t jobs,
                            const std::vector<evaluator::CandidateInput>& inputs,
                            const std::function<void(size_t index, const Result<msg::Verdict::Reader>& verdict)>& done) {
  if (inputs.empty()) return {};
  std::vector<std::unique_ptr<evaluator::EvaluationEngine>> engines;
  const size_t threads = std::max<size_t>(1, std::min(jobs, inputs.size()));
  evaluator::EngineOptions engine_options = options;
  evaluator::share_one_gpu(engine_options, threads);
  for (size_t i = 0; i < threads; ++i) {
    auto engine = make_engine(engine_options);
    if (!engine) return engine.error();
    engines.push_back(std::move(*engine));
  }
  std::mutex done_mutex;
  parallel_for(inputs.size(), threads, [&](size_t index, size_t worker) {
    capnp::MallocMessageBuilder message;
    auto verdict = message.initRoot<msg::Verdict>();
    Status judged = evaluate_and_judge(*engines[worker], inputs[index], verdict);
    std::lock_guard lock(done_mutex);
    if (judged)
      done(index, verdict.asReader());
    else
      done(index, judged.error());
  });
  return {};
}

}  // namespace drk::tools
