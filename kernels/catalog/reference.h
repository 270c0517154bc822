// Reference: a task's reference expression evaluated with LibTorch, and the drawing of its inputs.
//
// The expression is parsed once (kernels/catalog/expression.h) when the Reference is made; run()
// evaluates it on CPU tensors in the task's input order and returns the single output. Drawing is
// deterministic in the seed: the same (task, device, seed) gives the same values on the same
// LibTorch device.
//
// This header is the only catalog header that pulls LibTorch (at::Tensor); task.h stays
// torch-free.
// FP8 inputs (bytes, each followed by its float32 scale: kernels/catalog/float8.h) are dequantised
// where the expression reads them: in float64 when the scales are float64 (the exact reference),
// else in bfloat16, the FP8 variant's output dtype, as a user of FP8 inputs runs a PyTorch
// operator; a matrix product of two FP8 inputs on a GPU runs as torch._scaled_mm (cuBLASLt's FP8
// GEMM) where this LibTorch has it (2.5 and later) and it takes the sizes and formats.
// A LibTorch without a 16-bit kernel for an operator on the CPU (1.13 has no float16 clamp_min,
// matmul, ...) evaluates it as its users must: the floating inputs widened to float32, the
// result rounded back. The first run that meets such an operator settles it for the Reference,
// so that timed runs never pay for the refusal.
//
// Thread-safety: run() may be called from several threads at once (that setting is atomic;
// LibTorch's own intra-op threads are set by the caller with at::set_num_threads).
// Errors: invalid_argument for inputs that do not match the task (count, shape, dtype).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "kernels/catalog/expression.h"
#include "kernels/catalog/task.h"

namespace drk::kernels {

class Reference {
 public:
  // parse_error when the task's reference does not parse (a loaded catalog's always does).
  static Result<Reference> create(const Task& task);

  // inputs: one tensor per task input, in the task's order.
  Result<at::Tensor> run(const std::vector<at::Tensor>& inputs) const;
  // Whether 16-bit inputs are evaluated in float32 (above): known after the first such run.
  bool widens_16bit() const { return widen_16bit_->load(std::memory_order_relaxed); }

 private:
  Result<at::Tensor> evaluate(const std::vector<at::Tensor>& inputs, at::ScalarType float8_as) const;

  Expression expression_;
  std::vector<std::string> input_names_;
  std::vector<std::optional<DType>> float8_formats_;  // per input: its FP8 format, if it is one
  // Shared by copies (a Reference is copied into the engine's map): a copy settles it for all.
  std::shared_ptr<std::atomic<bool>> widen_16bit_ = std::make_shared<std::atomic<bool>>(false);
  // Whether LibTorch refused the FP8 GEMM for these inputs (their sizes or formats), so that later
  // runs dequantise without asking again.
  std::shared_ptr<std::atomic<bool>> scaled_mm_refused_ = std::make_shared<std::atomic<bool>>(false);
};

// LibTorch's type for a task dtype (DType mirrors the ABI's drk_dtype, value for value).
at::ScalarType scalar_type_of(DType dtype);

// Fresh CPU tensors, one per task input, at `device`'s shapes, drawn from each input's
// distribution with a generator seeded from (seed, input index), of the input's dtype: float32,
// float16 (drawn in float32 and rounded), int64 class indices in [0, class_count) for draw
// kind classes, or FP8 (drawn in float32 and quantised with a per-tensor scale, which goes into
// the scale input after it: float8_quantise_into).
std::vector<at::Tensor> draw_inputs(const Task& task, DeviceKind device, uint64_t seed);

// The same draw into `tensors` (one per task input, of the dtypes and sizes above), on whatever
// LibTorch device they live: on the CPU the values equal draw_inputs()'s; on a GPU they come
// from that device's generator (Philox on CUDA), the same for the same seed on every call.
// Thread-safe: each input gets a generator of its own.
void draw_inputs_into(const Task& task, DeviceKind device, uint64_t seed, const std::vector<at::Tensor>& tensors);

}  // namespace drk::kernels
