// ReferenceProblems: a client's `reference_code` as a task the evaluation engine knows. Each
// distinct source (by content hash) is written once as a KernelBench problem file
// (`references/level0/1_ref_HASH.py` under the gateway's state directory) and imported with
// `drk kernelbench import`'s machinery (tools/drk/kernelbench_import.h) into the gateway's own
// import folder (`problems/`); later requests with the same source find the record on disk, also
// after a restart.
//
// Thread-safety: task_for() from any thread; imports run one at a time. Errors: a Python with
// torch that cannot be found, a file that cannot be written (io_error), and a reference the probe
// cannot describe or run (invalid_argument with the probe's stage and message).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "base/result.h"

namespace drk::gateway {

class ReferenceProblems {
 public:
  // `state_dir`: the gateway's; `python`: an interpreter with torch (find_python_with_torch()).
  ReferenceProblems(std::string state_dir, std::string python);

  // The import folder (EngineOptions::kernelbench_dir of the gateway's engines).
  std::string problems_dir() const { return state_dir_ + "/problems"; }

  // The task name (kernelbench/level0/1_ref_HASH) of `reference_code`, importing it when new.
  Result<std::string> task_for(const std::string& reference_code);

 private:
  std::string state_dir_;
  std::string python_;
  std::mutex mutex_;
  std::map<std::string, Result<std::string>> known_;  // by content hash
};

}  // namespace drk::gateway
