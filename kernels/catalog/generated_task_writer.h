// Generated task writer: turns generate_tasks()' drafts into task files that hold, keeping only
// the valid, non-degenerate ones (docs/tasks.md, "Generated tasks").
//
// Each draft is written to DIR/NAME.yaml, read back with the catalog's own reader (the reference
// parses, its shapes match the declared outputs on every device, the family's params are
// complete) and audited at the CPU shapes (task_audit.h: the output moves with every input and
// is not a constant a kernel could replay). A draft that fails either is removed again and
// reported with the reason; the others stay.
//
// Thread-safety: none; one writer per directory. Files: only DIR/NAME.yaml of the drafts.
// Errors: invalid_argument when DIR holds a *.yaml of a draft's name (nothing is written then, so
// an earlier generation is never overwritten); io_error when DIR cannot be created or written.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/catalog/task_audit.h"
#include "kernels/catalog/task_generator.h"
#include "base/result.h"

namespace drk::kernels {

struct WrittenTask {
  GeneratedTask draft;
  std::string path;    // where it was written (removed again when dropped)
  bool kept = false;
  std::string reason;  // why it was dropped: the reader's error or the audit's findings
};

// Writes, checks and keeps or drops every draft, in order. `on_task` (optional) hears each one
// as it is decided, for progress.
Result<std::vector<WrittenTask>> write_generated_tasks(
    const std::vector<GeneratedTask>& drafts, const std::string& directory, const AuditOptions& audit = {},
    const std::function<void(const WrittenTask&)>& on_task = {});

}  // namespace drk::kernels
