// Task generator: new tasks composed from the catalog's vocabulary, for training a generator on
// more than the ported suite (docs/tasks.md, "Generated tasks").
//
// generate_tasks() draws, from its seed, tasks of four families that the scheduling space
// renders (so that the embedded policy can train on them, and a language model can too):
//   - elementwise: a chain of 1-4 pointwise operations (activations, scales, shifts, clamps),
//     each written once in the reference language and once as the C stage the renderers paste;
//   - gemm: a linear layer (with or without bias) or a plain matmul, then an epilogue chain of 0-3
//     pointwise operations;
//   - rowwise: softmax, log_softmax, rms_norm or layer_norm over drawn dims and shapes;
//   - reduction: sum, mean or max over a drawn dim, with or without keepdim.
// Every task gets CPU shapes (well under a second on one core), CUDA shapes (tens of megabytes
// to a few hundred per tensor) and second shapes (every dim + 3) for the hard-coded-shape trial;
// with `shape_ranges`, a shape range per device as well.
// The float16 and bfloat16 variants come from the catalog as for any float32 task.
//
// The result is YAML text, not yet checked: generated_task_writer.h writes it, loads it with the
// catalog's own reader and audits it, so that only valid, non-degenerate tasks are kept.
//
// Thread-safety: pure function of its options.
// Errors: invalid_argument for an unknown family or a count of 0, naming the allowed values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::kernels {

// The families generate_tasks() can draw.
const std::vector<std::string>& generated_families();
// The pointwise operations its chains draw from, by the names task names use ("tanh", "mul2").
std::vector<std::string> generated_pointwise_ops();

struct TaskGeneratorOptions {
  uint64_t seed = 1;
  size_t count = 32;                       // tasks drawn (before dropping invalid ones)
  std::vector<std::string> families = generated_families();  // drawn in turn, in this order
  std::string name_prefix = "gen";         // names are PREFIX_NNN_recipe
  // Whether each task declares a shape range per device (docs/tasks.md, "Shape ranges"): every
  // dim from 1 to its size at the task's shapes, so that a candidate is tried at drawn shapes up
  // to the task's own; `range_draws` shapes per evaluation.
  bool shape_ranges = false;
  uint32_t range_draws = 3;
};

struct GeneratedTask {
  std::string name;    // "gen_007_tanh_mul2_relu"
  std::string family;  // "elementwise"
  std::string recipe;  // "tanh -> * 2 -> relu", for people
  std::string yaml;    // the task file's text
};

// `options.count` tasks, distinct (two draws of the same reference at the same shapes give one
// task; the generator draws again, a bounded number of times). Deterministic in the options.
Result<std::vector<GeneratedTask>> generate_tasks(const TaskGeneratorOptions& options);

}  // namespace drk::kernels
