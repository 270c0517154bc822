// TaskEvaluator: what evaluates one gateway task and writes its result (evaluation_result.h), one
// per worker thread of the gateway (gateway.h). The real one is EngineTaskEvaluator
// (engine_task_evaluator.h); tests give scripted ones.
//
// Thread-safety: one thread per object (a worker's). Errors: evaluate() never fails: a task that
// cannot be evaluated is a result with status "failed" and its error_code.
#pragma once

#include <functional>
#include <memory>

#include "base/json_text.h"
#include "base/result.h"
#include "tools/gateway/evaluate_request.h"

namespace drk::gateway {

class TaskEvaluator {
 public:
  virtual ~TaskEvaluator() = default;
  virtual Json evaluate(const EvaluateRequest& request) = 0;
};

// Makes a worker's evaluator (on the worker's thread); an error leaves that worker failed.
using TaskEvaluatorFactory = std::function<Result<std::unique_ptr<TaskEvaluator>>(size_t worker)>;

}  // namespace drk::gateway
