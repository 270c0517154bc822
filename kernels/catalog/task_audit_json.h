// The task audit as JSON (`drk tasks audit --json`): one object
//   {device, degenerate, skipped: [name...], tasks: [{task, degenerate, output_elements,
//    output_scale, replay_pass_fraction, max_spread, inputs: [{name, changed_fraction,
//    max_change}], findings: [sentence...]}]}
// where `degenerate` at the top counts the degenerate tasks and `skipped` names the tasks that
// have no shapes on the device.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "kernels/catalog/task_audit.h"

namespace drk::kernels {

// One line of JSON (no newline).
std::string task_audit_json(DeviceKind device, const std::vector<TaskAudit>& audits,
                            const std::vector<std::string>& skipped);

}  // namespace drk::kernels
