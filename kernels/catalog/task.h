// Task and TaskCatalog: KernelBench problems as data (kernels/tasks/*.yaml).
//
// A task names its inputs (shape per shape set, dtype, how values are drawn), the reference
// computation as an expression over those inputs (evaluated with LibTorch by
// kernels/catalog/reference.h), its outputs, per-dtype tolerances, and the family parameters
// the embedded generator renders kernels from. docs/tasks.md documents the format.
//
// Thread-safety: a loaded catalog is immutable; share it freely between threads.
// Errors: loading returns parse_error / invalid_argument naming the file, the line and the fix.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/catalog/shape_range.h"
#include "messages/drk.capnp.h"

namespace drk::kernels {

enum class DeviceKind { cpu, cuda };
std::string_view device_name(DeviceKind device);
Result<DeviceKind> parse_device(std::string_view text);  // "cpu" | "cuda"

// In the order of msg::DType and of drk_dtype (kernels/abi/drk_kernel.h): a DType converts to
// either with a cast. Inputs are float32 or float16 (all floating inputs of a task share one; a
// dtype variant's are bfloat16 too), or int64 class indices (draw kind `classes`); the output has
// the floating inputs' dtype. An FP8 variant's floating inputs are float8_e4m3fn or float8_e5m2,
// each followed by its float32 scale, and its output is bfloat16 (dtype_variant.h).
enum class DType { float32, float16, bfloat16, float64, int32, int64, float8_e4m3fn, float8_e5m2 };
inline bool is_float8(DType dtype) { return dtype == DType::float8_e4m3fn || dtype == DType::float8_e5m2; }
std::string_view dtype_name(DType dtype);
Result<DType> parse_dtype(std::string_view text);  // "float32" | ...
size_t dtype_size(DType dtype);                    // bytes per element

// How an input's values are drawn for each trial.
struct Distribution {
  // normal | uniform | positive (uniform in [low, high], low > 0) | classes (int64 inputs:
  // uniform integers in [0, C), C = dim `classes_dim` of input `classes_of` at the device's
  // shapes, so that the class count follows the scaled CPU shapes too) | scale (an FP8 input's
  // scale, the input before it: written when that input is drawn, never declared in YAML)
  std::string kind = "normal";
  double low = -1.0, high = 1.0, mean = 0.0, stddev = 1.0;
  std::string classes_of;
  int64_t classes_dim = 1;
};

struct InputSpec {
  std::string name;
  DType dtype = DType::float32;
  Distribution draw;
};

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

struct Task {
  std::string name;          // "relu"
  std::string title;         // "ReLU activation"
  std::string origin;        // "KernelBench level 1, problem 19 (19_ReLU.py)"
  std::string family;        // elementwise | rowwise | gemm | reduction | batched_gemm | conv2d |
                             // cross_entropy | attention (docs/tasks.md)
  std::vector<InputSpec> inputs;
  std::vector<std::string> outputs;    // output names, in the candidate's output order
  // The dtype of the outputs: that of the floating inputs, which the reference yields (float32,
  // float16 for a half-precision task, or a dtype variant's).
  DType output_dtype = DType::float32;
  std::string reference;               // e.g. "leaky_relu(linear(x, w, b) * 2.0, 0.1)"
  std::map<std::string, std::string> params;  // family parameters for the generator
  // Input and output shapes per device, by tensor name: "cpu" shapes are scaled to evaluate in
  // well under a second on one core; "cuda" shapes are KernelBench's published ones. Output
  // shapes are data too (the catalog checks them against the reference). A task is evaluated
  // only on the devices it has shapes for (runs_on): matmul_fp16 has no "cpu" shapes.
  std::map<std::string, std::vector<int64_t>> cpu_shapes;
  std::map<std::string, std::vector<int64_t>> gpu_shapes;
  std::map<DType, Tolerance> tolerances;  // falls back to KernelBench's per-dtype defaults
  // Optional (`second_shapes:`): other shapes per device, same names and ranks, at which the
  // Evaluator runs one extra correctness trial that catches hard-coded shapes. Empty: none.
  std::map<std::string, std::vector<int64_t>> cpu_second_shapes;
  std::map<std::string, std::vector<int64_t>> gpu_second_shapes;
  // Optional (`shape_range:`): per device, the shapes the task may be called at beyond these, from
  // which every evaluation draws a few to try the candidate at (shape_range.h).
  std::optional<ShapeRange> cpu_shape_range;
  std::optional<ShapeRange> gpu_shape_range;

  const std::map<std::string, std::vector<int64_t>>& shapes(DeviceKind device) const {
    return device == DeviceKind::cuda ? gpu_shapes : cpu_shapes;
  }
  const std::map<std::string, std::vector<int64_t>>& second_shapes(DeviceKind device) const {
    return device == DeviceKind::cuda ? gpu_second_shapes : cpu_second_shapes;
  }
  const ShapeRange* shape_range(DeviceKind device) const {
    const auto& range = device == DeviceKind::cuda ? gpu_shape_range : cpu_shape_range;
    return range ? &*range : nullptr;
  }
  // Whether the task has shapes for `device`, so that it can be evaluated (and trained) there.
  bool runs_on(DeviceKind device) const { return !shapes(device).empty(); }
  // "cpu and cuda", "cuda": the devices the task runs on, for messages.
  std::string devices_text() const;
  Tolerance tolerance(DType dtype) const;
  // The dtype the task is known by, which the archive groups kernels by: its floating inputs' for
  // an FP8 variant (whose output is bfloat16), else its output's.
  DType dtype() const;
  // The tolerance outputs are compared with: that of output_dtype.
  Tolerance output_tolerance() const { return tolerance(output_dtype); }
};

// Reads one task file as the catalog does; every error names the file and the line.
Result<Task> load_task_file(const std::string& path);

class TaskCatalog {
 public:
  // Loads every *.yaml in `directories`: one folder, or several separated by ':' (as $PATH), so
  // that generated tasks sit beside the ported ones ("kernels/tasks:runs/generated"). Fails on the
  // first malformed file, naming it, and on a task name that two files declare, naming both.
  static Result<TaskCatalog> load(const std::string& directories);
  // kernels/tasks of the source tree, or $DRK_TASKS_DIR when set.
  static std::string default_directory();

  const std::vector<Task>& tasks() const { return tasks_; }
  // The dtype variants of the float32 tasks (dtype_variant.h: relu@float16, relu@bfloat16), in
  // the order of tasks(). `tasks: all` of a run means tasks(), not these: a run names them.
  const std::deque<Task>& variants() const { return variants_; }
  // A task or a dtype variant. not_found lists the known names (or the task's variants).
  Result<const Task*> find(std::string_view name) const;

 private:
  std::vector<Task> tasks_;  // sorted by name
  std::deque<Task> variants_;
};

// Describes `task` on `device` as a message (shapes and dtypes of that device), for actors that
// do not hold the catalog (Generators, LLM prompts). The task must run on `device` (runs_on):
// a task without shapes there is a fault of the caller (std::out_of_range).
void fill_task_message(const Task& task, DeviceKind device, msg::Task::Builder out);

// A copy of `task` whose `device` shapes are `shapes` (the same tensors and ranks), so that
// draw_inputs(), class_count() and the estimates work at them unchanged.
Task at_shapes(const Task& task, DeviceKind device, const std::map<std::string, std::vector<int64_t>>& shapes);
// at_shapes() at the task's second shapes (which must be declared).
Task at_second_shapes(const Task& task, DeviceKind device);
// Every input's shape at `device`, for people: "x [64, 4096], w [4096]".
std::string input_shapes_text(const Task& task, DeviceKind device);

// C of an input drawn with kind `classes` at `device`'s shapes (0 for other kinds).
int64_t class_count(const Task& task, const InputSpec& input, DeviceKind device);

// Floating-point operations of one reference evaluation at `device`'s shapes, by the convention
// of docs/tasks.md (one flop per element per elementwise operation, 2*M*N*K per matrix product,
// 2*N*O*Ho*Wo*C*kh*kw per convolution, ...); 0 where the task does not run on `device`.
double estimate_flops(const Task& task, DeviceKind device);
// Bytes every implementation must move at least: each input read once, each output written once
// (at their dtypes' sizes); 0 where the task does not run on `device`.
double estimate_min_bytes(const Task& task, DeviceKind device);

}  // namespace drk::kernels
