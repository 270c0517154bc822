// `drk kernelbench import`: KernelBench problem files become records of the task catalog
// (kernels/catalog/kernelbench_problem.h), one YAML file per problem under the import folder.
//
// Each problem is described by kernels/catalog/kernelbench_probe.py, run by a Python with torch,
// a few problems to one Python process (torch loads once per batch), `jobs` processes at once; a
// process that dies or runs out of time costs the problem it was on (recorded as failed at stage
// "probe", with what it printed) and the rest of its batch go on in a new process. A problem that
// cannot be described or whose reference cannot run is recorded with its reason, never skipped; a
// record is replaced atomically, so an import that fails half-way keeps every record it wrote.
//
// Thread-safety: free functions; one import at a time per folder. import_kernelbench calls
// `progress` from its probes' threads, one call at a time. Errors: a path that holds no
// problem (not_found), no Python with torch (not_found, with the fix), a record that cannot be
// written (io_error naming it).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "kernels/compile/command_runner.h"

namespace drk::tools {

// A problem file found under the import's path.
struct KernelBenchFile {
  int level = 0;
  int problem_id = 0;
  std::string stem;  // 19_ReLU
  std::string path;  // absolute
};

// `path` is a problem file (its level from a `levelN` parent folder, else 0), a levelN folder,
// or a folder holding levelN folders (a KernelBench checkout: its `KernelBench/` folder or the
// checkout itself). Sorted by level, then problem id.
Result<std::vector<KernelBenchFile>> find_kernelbench_files(const std::string& path);

// The Python that imports torch: `requested` (--python), else $DRK_PYTHON, else the first of
// python3 on PATH and /usr/bin/python3 that can `import torch`.
Result<std::string> find_python_with_torch(const std::optional<std::string>& requested,
                                           compile::CommandRunner& runner);

struct KernelBenchImport {
  std::string into;                        // the import folder
  std::string python;                      // an interpreter with torch
  std::optional<std::string> run_device;   // cpu | cuda: also run each reference once
  std::chrono::seconds per_problem{300};   // the probe's time per problem
  uint64_t seed = 42;
  // Probe processes at once, each a Python with torch loaded. With run_device each also builds a
  // problem's model (at once with the others), then draws its inputs at their published shapes and
  // times its reference holding a lock that the import's probes share, so that references run on
  // the device one at a time; the host is shared all the same, so a cpu run wants 1.
  size_t jobs = 1;
};

// The default of `drk kernelbench import --jobs`: a quarter of the cores, 1 to 4.
size_t default_import_jobs();

// Imports `files`, calling `progress` after each problem with the record it wrote (in the order
// the probes finish them); the result is in the order of `files`.
Result<std::vector<kernels::KernelBenchProblem>> import_kernelbench(
    const std::vector<KernelBenchFile>& files, const KernelBenchImport& import, compile::CommandRunner& runner,
    FileSystem& file_system, const std::function<void(const kernels::KernelBenchProblem&)>& progress);

}  // namespace drk::tools
