// EvaluationRun: what one evaluation is working on (a task at one set of shapes, its buffer sets
// in a TensorStore, the seeds of their draws, the result being filled), and the operations on its
// tensors that every step shares: drawing inputs, nudging them, their pristine copies, poisoning
// outputs, the reference's answer.
//
// Inputs are drawn from seeds (kernels/catalog/reference.h). In the shared region the pristine
// copies are kept; in device memory they are drawn again when needed (draws are deterministic),
// so that published shapes cost no host memory and no copies.
//
// Ownership: a run points at its task, reference and store, which the engine owns and which
// outlive it; `out` is the caller's result. Thread-safety: the engine's thread only.
// Errors: expected_output() returns the reference's error (an expression LibTorch cannot
// evaluate at these shapes).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/evaluator/engine/buffer_layout.h"
#include "actors/evaluator/engine/seed_mix.h"
#include "actors/evaluator/engine/tensor_store.h"
#include "base/result.h"
#include "actors/evaluator/engine/reference_model.h"
#include "kernels/catalog/task.h"
#include "messages/drk.capnp.h"

namespace drk::evaluator {

struct EvaluationRun {
  const kernels::Task* task = nullptr;
  const ReferenceModel* reference = nullptr;
  kernels::DeviceKind shapes = kernels::DeviceKind::cpu;  // whose shapes the task is evaluated at
  TensorStore* store = nullptr;
  Layout layout;
  kernels::Tolerance tolerance;
  uint64_t seed = 0;
  std::vector<uint64_t> draw_seeds;                     // per buffer set: its inputs' current draw
  std::map<uint32_t, uint64_t> nudges;                  // buffer set -> the nudge since its draw
  std::vector<std::vector<at::Tensor>> pristine_copies; // per buffer set, in the shared region
  msg::EvalResult::Builder out{nullptr};
  bool sandbox_failed = false;
  // Whether the float32 reference was compared with the float64 answer after a failed comparison
  // (CorrectnessTrials::widen_to_reference_error): once per evaluation.
  bool reference_error_measured = false;
  std::set<std::string> own_kernels;  // CUDA: entry names compiled from the candidate's source (nvcc's, Triton's)
  // Non-zero while a re-timing swaps input elements before every call (input_swaps.h); each
  // request gets its own seed from it.
  uint64_t swap_seed = 0;
  uint64_t swap_requests = 0;
  uint64_t next_swap_seed() { return swap_seed == 0 ? 0 : mix(swap_seed, ++swap_requests); }
  // CPU timing: calls made so far in the timed order, where call g takes set g mod K's inputs and
  // set g mod (K + 1)'s outputs, which the call before it in that output last wrote for other
  // inputs: no timed call starts from an output that already holds its answer.
  uint64_t rotation_calls = 0;
  // Per timed candidate batch: the sandbox's CPU time over the round trip's wall time
  // (cpuPerWall: their median, so that a batch whose clock was read while a thread still ran
  // past the reading's wait, and so charged part of a scheduler tick of another, does not decide).
  std::vector<double> batch_cpu_per_wall;

  // Takes `layout`, with no inputs drawn yet.
  void lay_out(Layout layout);
  // A run of `shaped` (this run's task at other shapes, which must outlive it) in `sets` buffer
  // sets of the same store, with this run's reference, tolerance, seed, result and kernels.
  EvaluationRun at(const kernels::Task& shaped, uint32_t sets) const;
  Status reserve(size_t bytes) { return store->reserve(bytes); }
  uint32_t set_count() const { return static_cast<uint32_t>(layout.sets.size()); }

  at::Tensor view(const TensorSlot& slot) const { return store->view(slot); }
  // The first output of `set`, in place.
  at::Tensor output(uint32_t set) const { return view(layout.sets[set].outputs[0]); }
  // Draws the inputs of `set` from `draw_seed` into their place.
  void write_inputs(uint32_t set, uint64_t draw_seed);
  // Swaps a few secret pairs of elements of the inputs of `set` in place (input_nudge.h), and
  // of their pristine copies, or on the device records the nudge for pristine() to repeat.
  void nudge(uint32_t set, uint64_t nudge_seed);
  // The inputs of `set` as drawn (and nudged), whatever the candidate did to them.
  std::vector<at::Tensor> pristine(uint32_t set) const;
  void poison_outputs(uint32_t set);
  bool inputs_mutated(uint32_t set, const std::vector<at::Tensor>& inputs) const;
  // What a candidate's output is judged against: the task's reference on `inputs`. A float16 or
  // bfloat16 output is the reference evaluated in float64 and rounded to its dtype: LibTorch's
  // half-precision products may reduce in half precision (cuBLAS), which at KernelBench's shapes
  // strays past the task's tolerance where an honest kernel that accumulates in float32 does not
  // (matmul_fp16's second shape, K = 4099, on the H200).
  Result<at::Tensor> expected_output(const std::vector<at::Tensor>& inputs) const;
};

// Floating inputs in float64, others as they are.
std::vector<at::Tensor> in_float64(const std::vector<at::Tensor>& inputs);

}  // namespace drk::evaluator
