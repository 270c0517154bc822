// task_brief(): what turn 1 of a conversation says about a task (prompt_builder.h's TaskBrief),
// read from the task as the Learner sends it (msg::Task): for a KernelBench problem
// (`kernelbench/...`) the Python source of its file, as imported (kernels/catalog/
// kernelbench_problem.h), and the backend its ModelNew is to use; for a task of ours its family,
// tensors and reference expression. The LLM Generator and `drk generate` both build turn 1 so.
//
// Errors: a KernelBench problem whose record or file cannot be read here (the catalog's error,
// naming the file). Thread-safety: reads files; no shared state.
#pragma once

#include <string>

#include "actors/generator/llm/prompt_builder.h"
#include "base/result.h"
#include "messages/drk.capnp.h"

namespace drk::generator {

// `kernelbench_backend`: experiment.generator.kernelbench_backend (llm_settings.h).
Result<TaskBrief> task_brief(msg::Task::Reader task, const std::string& kernelbench_backend);

}  // namespace drk::generator
