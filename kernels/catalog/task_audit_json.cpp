#include "kernels/catalog/task_audit_json.h"

#include "base/json_text.h"

namespace drk::kernels {

std::string task_audit_json(DeviceKind device, const std::vector<TaskAudit>& audits,
                            const std::vector<std::string>& skipped) {
  size_t degenerate = 0;
  Json tasks = Json::array();
  for (const auto& audit : audits) {
    degenerate += audit.degenerate() ? 1 : 0;
    Json inputs = Json::array();
    for (const auto& input : audit.inputs)
      inputs.push_back({{"name", input.input}, {"changed_fraction", input.changed_fraction}, {"max_change", input.max_change}});
    tasks.push_back({{"task", audit.task},
                     {"degenerate", audit.degenerate()},
                     {"output_elements", audit.output_elements},
                     {"output_scale", audit.output_scale},
                     {"replay_pass_fraction", audit.replay_pass_fraction},
                     {"max_spread", audit.max_spread},
                     {"inputs", std::move(inputs)},
                     {"findings", audit.findings}});
  }
  return json_text({{"device", device_name(device)},
                    {"degenerate", degenerate},
                    {"skipped", skipped},
                    {"tasks", std::move(tasks)}});
}

}  // namespace drk::kernels
