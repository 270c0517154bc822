#include "tools/gateway/reference_problems.h"

#include "base/file_system.h"
#include "base/staged_file.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "kernels/compile/command_runner.h"
#include "kernels/compile/content_hash.h"
#include "tools/drk/kernelbench_import.h"

namespace drk::gateway {

ReferenceProblems::ReferenceProblems(std::string state_dir, std::string python)
    : state_dir_(std::move(state_dir)), python_(std::move(python)) {}

Result<std::string> ReferenceProblems::task_for(const std::string& reference_code) {
  const std::string hash = compile::content_hash(reference_code).substr(0, 16);
  const std::string stem = "1_ref_" + hash;
  const std::string name = kernels::kernelbench_task_name(0, stem);
  std::lock_guard lock(mutex_);
  if (auto known = known_.find(hash); known != known_.end()) return known->second;

  auto record = kernels::load_kernelbench_problem(problems_dir(), name);
  if (!record) {
    FileSystem& file_system = real_file_system();
    const std::string folder = state_dir_ + "/references/level0";
    if (auto made = file_system.create_directories(folder); !made) return made.error();
    const std::string source = folder + "/" + stem + ".py";
    if (auto written = write_file_atomically(file_system, source, reference_code); !written) return written.error();
    tools::KernelBenchImport import;
    import.into = problems_dir();
    import.python = python_;
    auto runner = compile::system_command_runner();
    auto imported = tools::import_kernelbench({tools::KernelBenchFile{0, 1, stem, source}}, import, *runner,
                                              file_system, nullptr);
    if (!imported) return imported.error();
    record = imported->front();
  }
  Result<std::string> task = name;
  if (record->failure)
    task = make_error(Errc::invalid_argument, "reference_code cannot be used as a KernelBench problem (" +
                                                  record->failure->stage + "): " + record->failure->message);
  else if (record->reference_run && record->reference_run->failure)
    task = make_error(Errc::invalid_argument, "reference_code's Model does not run (" +
                                                  record->reference_run->failure->stage +
                                                  "): " + record->reference_run->failure->message);
  known_.emplace(hash, task);
  return task;
}

}  // namespace drk::gateway
