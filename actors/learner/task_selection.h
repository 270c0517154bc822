// select_tasks: the catalog tasks a training run works on (experiment.tasks), limited to those
// the embedded policy renders.
//
// The embedded generator renders the families of kernels/schedule/space.h only (elementwise,
// rowwise, gemm); the catalog holds more (conv2d, attention, ...), which an LLM generator or a
// person may still be evaluated on. `names` empty means every task the policy renders; the
// others are listed in `skipped` so that the caller says once which were left out. A name that
// is unknown, or whose family the policy does not render, is an error naming the task, its
// family and the families the policy renders, so that a run fails before its first rollout.
//
// Thread-safety: a pure function; the pointers point into `catalog`, which must outlive them.
// Errors: not_found for an unknown name, invalid_argument for a family the policy cannot render
// or an empty selection.
#pragma once

#include <string>
#include <vector>

#include "kernels/catalog/task.h"
#include "runtime/result.h"

namespace drk::learner {

struct TaskSelection {
  std::vector<const kernels::Task*> tasks;  // in the order of `names`, or of the catalog
  std::vector<std::string> skipped;         // with `names` empty: tasks of other families
};

Result<TaskSelection> select_tasks(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names);

// "elementwise, rowwise, gemm": the families the embedded policy renders, for messages.
std::string rendered_families();

}  // namespace drk::learner
