// select_tasks: the catalog tasks a training run works on (experiment.tasks), limited to those
// the embedded policy renders on the run's device (experiment.device).
//
// The embedded generator renders the families of kernels/schedule/space.h only (elementwise,
// rowwise, gemm); the catalog holds more (conv2d, attention, ...), which an LLM generator or a
// person may still be evaluated on. A task also runs only on the devices it has shapes for
// (kernels/catalog/task.h, Task::runs_on: the float16 matmul_fp16 runs on cuda only), so that a
// CPU run never hands the CPU policy a task its space cannot render. `names` empty means every
// task the policy renders on `device`; the others are listed in `skipped` (other families) and
// `other_device` (no shapes on `device`), so that the caller says once which were left out. A
// name that is unknown, whose family the policy does not render, or that does not run on
// `device` is an error naming the task and the fix, so that a run fails before its first
// rollout.
//
// Thread-safety: a pure function; the pointers point into `catalog`, which must outlive them.
// Errors: not_found for an unknown name, invalid_argument for a family the policy cannot render,
// a task without shapes on `device`, or an empty selection.
#pragma once

#include <string>
#include <vector>

#include "kernels/catalog/task.h"
#include "runtime/result.h"

namespace drk::learner {

struct TaskSelection {
  std::vector<const kernels::Task*> tasks;  // in the order of `names`, or of the catalog
  std::vector<std::string> skipped;         // with `names` empty: tasks of other families
  std::vector<std::string> other_device;    // with `names` empty: tasks without shapes on the device
};

Result<TaskSelection> select_tasks(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names,
                                   kernels::DeviceKind device);

// "elementwise, rowwise, gemm": the families the embedded policy renders, for messages.
std::string rendered_families();

}  // namespace drk::learner
