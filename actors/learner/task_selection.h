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
// A named task that `can_generate` refuses (a dtype variant such as relu@bfloat16 under the
// embedded policy) is an error with its reason; with `names` empty such tasks are left out as
// tasks of another device are.
//
// Thread-safety: a pure function; the pointers point into `catalog`, which must outlive them.
// Errors: not_found for an unknown name, invalid_argument for a task without shapes on
// `device` or one the Generator cannot write, or an empty selection.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/catalog/task.h"
#include "base/result.h"

namespace drk::learner {

struct TaskSelection {
  std::vector<const kernels::Task*> tasks;  // in the order of `names`, or of the catalog
  std::vector<std::string> other_device;    // with `names` empty: tasks without shapes on the device
                                            // or that the Generator cannot write
};

// Whether the run's Generator can write candidates for a task on a device (the embedded policy
// renders float32, and float16 for the cuda gemm family); empty: every task.
using GeneratorCheck = std::function<Status(const kernels::Task&, kernels::DeviceKind)>;

// The embedded policy's check: the task, described as its Generators receive it, is one the
// scheduling space describes (kernels/schedule/problem.h).
GeneratorCheck embedded_policy_renders();

// The indices (into a run's `task_count` tasks) that step `step` plays when a step plays
// `per_step` of them (experiment.tasks_per_step; 0, or at least task_count: all, in order). The
// tasks are shuffled once by `seed` and taken in turn, `per_step` a step, so that every task is
// played as often as any other within one each; a restarted Learner plays the same step again.
std::vector<size_t> tasks_of_step(size_t task_count, size_t per_step, uint64_t seed, uint64_t step);

Result<TaskSelection> select_tasks(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names,
                                   kernels::DeviceKind device, const GeneratorCheck& can_generate = {});

}  // namespace drk::learner
