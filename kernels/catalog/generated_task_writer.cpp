#include "kernels/catalog/generated_task_writer.h"

#include <filesystem>
#include <fstream>

namespace drk::kernels {

namespace fs = std::filesystem;

namespace {

std::string audit_reason(const TaskAudit& audit) {
  std::string reason = "degenerate:";
  for (const auto& finding : audit.findings) reason += " " + finding;
  return reason;
}

// The reader's and the auditor's verdict on a written file: empty when the task holds.
std::string check(const std::string& path, const AuditOptions& options) {
  auto task = load_task_file(path);
  if (!task) return task.error().message;
  auto audit = audit_task(*task, DeviceKind::cpu, options);
  if (!audit) return "the audit could not run it: " + audit.error().message;
  return audit->degenerate() ? audit_reason(*audit) : std::string{};
}

}  // namespace

Result<std::vector<WrittenTask>> write_generated_tasks(const std::vector<GeneratedTask>& drafts,
                                                       const std::string& directory, const AuditOptions& audit,
                                                       const std::function<void(const WrittenTask&)>& on_task) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) return make_error(Errc::io_error, "cannot create the task directory '" + directory + "': " + ec.message());
  for (const auto& draft : drafts) {
    const fs::path path = fs::path(directory) / (draft.name + ".yaml");
    if (fs::exists(path, ec))
      return make_error(Errc::invalid_argument,
                        path.string() + " exists already: generate into an empty directory, or give another "
                                        "--prefix, so that no earlier task is overwritten");
  }
  std::vector<WrittenTask> written;
  for (const auto& draft : drafts) {
    WrittenTask task{draft, (fs::path(directory) / (draft.name + ".yaml")).string(), false, {}};
    {
      std::ofstream out(task.path);
      out << draft.yaml;
      if (!out.flush()) return make_error(Errc::io_error, "cannot write " + task.path);
    }
    task.reason = check(task.path, audit);
    task.kept = task.reason.empty();
    if (!task.kept) fs::remove(task.path, ec);
    if (on_task) on_task(task);
    written.push_back(std::move(task));
  }
  return written;
}

}  // namespace drk::kernels
