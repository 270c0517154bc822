#include "actors/learner/task_selection.h"

namespace drk::learner {

Result<TaskSelection> select_tasks(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names,
                                   kernels::DeviceKind device) {
  TaskSelection selection;
  const std::string device_text(kernels::device_name(device));
  if (names.empty()) {
    for (const auto& task : catalog.tasks()) {
      if (!task.runs_on(device)) selection.other_device.push_back(task.name);
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
    selection.tasks.push_back(*task);
  }
  return selection;
}

}  // namespace drk::learner
