#include "actors/learner/task_selection.h"

#include <numeric>
#include <random>

#include <capnp/message.h>

#include "kernels/schedule/problem.h"

namespace drk::learner {

GeneratorCheck embedded_policy_renders() {
  return [](const kernels::Task& task, kernels::DeviceKind device) -> Status {
    capnp::MallocMessageBuilder message;
    auto described = message.initRoot<msg::Task>();
    kernels::fill_task_message(task, device, described);
    if (auto problem = schedule::problem_from_task(described); !problem) return problem.error();
    return {};
  };
}

Result<TaskSelection> select_tasks(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names,
                                   kernels::DeviceKind device, const GeneratorCheck& can_generate) {
  TaskSelection selection;
  const std::string device_text(kernels::device_name(device));
  auto generated = [&](const kernels::Task& task) { return can_generate ? can_generate(task, device) : Status{}; };
  if (names.empty()) {
    for (const auto& task : catalog.tasks()) {
      if (!task.runs_on(device) || !generated(task)) selection.other_device.push_back(task.name);
      else selection.tasks.push_back(&task);
    }
    if (selection.tasks.empty())
      return make_error(Errc::invalid_argument,
                        "experiment.tasks: the catalog holds no task that runs on " + device_text);
    return selection;
  }
  for (const auto& name : names) {
    auto task = catalog.find(name);
    if (!task) return make_error(task.error().code, "experiment.tasks: " + task.error().message);
    if (!(*task)->runs_on(device))
      return make_error(Errc::invalid_argument,
                        "experiment.tasks: task '" + name + "' has no " + device_text + " shapes: it runs on " +
                            (*task)->devices_text() + " only (set experiment.device, or remove it from "
                            "experiment.tasks)");
    if (auto generator = generated(**task); !generator)
      return make_error(Errc::invalid_argument, "experiment.tasks: " + generator.error().message);
    selection.tasks.push_back(*task);
  }
  return selection;
}

std::vector<size_t> tasks_of_step(size_t task_count, size_t per_step, uint64_t seed, uint64_t step) {
  std::vector<size_t> order(task_count);
  std::iota(order.begin(), order.end(), size_t{0});
  if (per_step == 0 || per_step >= task_count) return order;
  std::mt19937_64 random(seed);
  for (size_t i = task_count - 1; i > 0; --i) std::swap(order[i], order[random() % (i + 1)]);
  std::vector<size_t> chosen;
  for (size_t k = 0; k < per_step; ++k) chosen.push_back(order[(step * per_step + k) % task_count]);
  return chosen;
}

}  // namespace drk::learner
