// select_tasks: the catalog tasks a training run works on (experiment.tasks), limited to those
// that run on the run's device (experiment.device).
//
// The embedded generator renders every family the catalog admits (kernels/schedule/space.h and
// kernels/catalog/task.cpp list the same eight). A task runs only on the devices it has shapes
// for (kernels/catalog/task.h, Task::runs_on: the float16 matmul_fp16 runs on cuda only), so
// that a CPU run never hands the CPU policy a task its space cannot render. `names` empty means
// every task that runs on `device`; the others are listed in `other_device`, so that the caller
// says once which were left out. A name that is unknown or that does not run on `device` is an
// error naming the task and the fix, so that a run fails before its first rollout.
//
// Thread-safety: a pure function; the pointers point into `catalog`, which must outlive them.
// Errors: not_found for an unknown name, invalid_argument for a task without shapes on
// `device`, or an empty selection.
#pragma once

#include <string>
#include <vector>

#include "kernels/catalog/task.h"
#include "base/result.h"

namespace drk::learner {

struct TaskSelection {
  std::vector<const kernels::Task*> tasks;  // in the order of `names`, or of the catalog
  std::vector<std::string> other_device;    // with `names` empty: tasks without shapes on the device
};

Result<TaskSelection> select_tasks(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names,
                                   kernels::DeviceKind device);

}  // namespace drk::learner
