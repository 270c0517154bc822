// KernelBenchProblem: one problem of KernelBench (a Python file with `Model`, `get_inputs()` and
// `get_init_inputs()`) as `drk kernelbench import` recorded it (docs/kernelbench.md): its name in
// the catalog (`kernelbench/level1/19_ReLU`), where its source was and the SHA-256 of that source,
// its inputs and outputs at the published shapes, FLOPs and minimum bytes, the family of ours it
// fits (if one does), and why it cannot run when it cannot. KernelBench's files are the user's
// data: the record names the file, the catalog never holds a copy of it.
//
// Records are YAML files, one per problem, in levelN/ folders under the import folder
// (default_kernelbench_directory()).
//
// Thread-safety: plain values and pure functions. Errors: reading returns parse_error naming the
// file and the field; listing returns io_error naming the folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/catalog/task.h"

namespace drk::kernels {

// A positional argument of get_inputs() or a returned value of forward(): a tensor (shape and
// torch dtype name, "float32") or a plain value (YAML/JSON text: 3, -1.0, [16384, 16384]).
struct KernelBenchValue {
  bool tensor = true;
  std::vector<int64_t> shape;
  std::string dtype;
  std::string value;
};

// Why a problem, or its reference run, failed: the stage ("load", "get_init_inputs",
// "get_inputs", "construct", "forward", "probe") and Python's message.
struct KernelBenchFailure {
  std::string stage;
  std::string message;
};

// One real run of the reference at the published shapes (`import --run DEVICE`).
struct KernelBenchReferenceRun {
  std::string device;                         // cpu | cuda
  double ms = 0;                              // one forward call, after one warm-up call
  int64_t peak_bytes = 0;                     // cuda: the allocator's peak; cpu: 0 (not measured)
  std::optional<KernelBenchFailure> failure;  // set when it could not run
};

struct KernelBenchProblem {
  std::string name;         // kernelbench/level1/19_ReLU
  int level = 0;            // 1..4 (0: a file outside a levelN folder)
  int problem_id = 0;       // the number before the first '_' of the file name
  std::string title;        // the first paragraph of Model's docstring
  std::string source;       // absolute path of the problem file when it was imported
  std::string source_sha256;
  std::string family;       // a family of ours that fits (docs/tasks.md), or empty
  std::string init_inputs;  // get_init_inputs() as JSON text
  std::vector<KernelBenchValue> inputs;
  std::vector<KernelBenchValue> outputs;
  int64_t parameters = 0;   // elements of Model's parameters
  std::optional<double> flops;  // torch's flop counter, where this torch has one and counts every op
  double min_bytes = 0;     // inputs, outputs and parameters, each read or written once
  std::string torch_version;  // of the Python that described it
  std::optional<KernelBenchFailure> failure;  // set when it could not be described
  std::optional<KernelBenchReferenceRun> reference_run;

  bool usable() const { return !failure && (!reference_run || !reference_run->failure); }
};

// `levelN/ID_Name` -> the catalog name, `kernelbench/levelN/ID_Name`.
std::string kernelbench_task_name(int level, const std::string& stem);

// The family of ours a problem fits, judged by its file name (`19_ReLU` -> elementwise,
// `23_Softmax` -> rowwise, `1_Square_matrix_multiplication_` -> gemm), or empty.
std::string kernelbench_family(const std::string& stem);

// The values as people read them: "[16, 1024] float32, 3".
std::string kernelbench_values_text(const std::vector<KernelBenchValue>& values);
// Whether the problem can run, and why not: "ok", "ok, reference 0.250 ms on cpu",
// "ok, reference 0.250 ms, peak 1.07 GB on cuda" (the peak where measured),
// "cannot run: forward: AttributeError: ...", "reference fails on cuda: forward: ...".
std::string kernelbench_status_text(const KernelBenchProblem& problem);

std::string kernelbench_problem_yaml(const KernelBenchProblem& problem);
Result<KernelBenchProblem> parse_kernelbench_problem(const std::string& yaml_text, const std::string& file);

// The problem as a task the Evaluator lays out and judges: its tensor arguments are inputs
// `input1`, `input2`, ... (in get_inputs()'s order, skipping plain values), its output `output`, at
// the published shapes on both devices, with KernelBench's tolerance for the output's dtype. It has
// no reference expression: its reference is the problem's own Model (the Evaluator's
// PythonReference). invalid_argument when the problem cannot be evaluated (it failed to import,
// has not exactly one tensor output, or a dtype the harness has no layout for).
Result<Task> kernelbench_task(const KernelBenchProblem& problem);

// Where imports go and `drk tasks` looks: $DRK_KERNELBENCH_DIR, else the `kernelbench` folder of
// the task folder (TaskCatalog::default_directory()).
std::string default_kernelbench_directory();
// kernels/catalog/kernelbench_probe.py of the source tree (what describes a problem file).
std::string kernelbench_probe_script();
// kernels/catalog/model_graph.py of the source tree (what splits a whole model, drk model).
std::string model_graph_script();
// The record of the problem `name` (kernelbench/levelN/ID_Name) under `directory`; not_found,
// with the fix, when it was not imported there.
Result<KernelBenchProblem> load_kernelbench_problem(const std::string& directory, const std::string& name);
// Every record under `directory`/levelN/, by name; none when the folder does not exist.
Result<std::vector<KernelBenchProblem>> load_kernelbench_problems(const std::string& directory);

}  // namespace drk::kernels
