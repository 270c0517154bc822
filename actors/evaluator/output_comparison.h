// OutputComparison: the arithmetic of an evaluation's correctness checks, on tensors wherever
// they live: the CPU path's shared region, or the Evaluator's own device memory on CUDA, where
// KernelBench's published shapes hold billions of elements that no host copy should touch.
//
// Every function works through flat chunks of `chunk` elements, so that the float64
// temporaries stay bounded (~10 bytes per element of a chunk) whatever the tensor's size.
// Outputs are float32 (or float16 for a half-precision task), contiguous, the same size as the
// reference; nothing here allocates beyond one chunk's temporaries.
//
// Thread-safety: free functions; concurrent calls on different tensors are fine. Errors: a
// tensor of the wrong dtype or size is a fault of the caller (LibTorch throws c10::Error).
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "kernels/catalog/expression.h"
#include "kernels/catalog/task.h"

namespace drk::evaluator {

// What outputs hold before a checked call: a quiet NaN that no arithmetic produces (float32),
// and its 16-bit counterpart, a NaN both as float16 and as bfloat16 (arithmetic and conversions
// give 0x7E00, 0x7FC0 or 0x7FFF).
constexpr uint32_t kPoisonBits = 0x7FC2DEADu;
constexpr uint16_t kPoisonBits16 = 0x7FADu;
constexpr int64_t kComparisonChunk = int64_t{1} << 25;

struct Comparison {
  bool passed = true;
  bool left_poisoned = false;  // some element still held kPoisonBits
  bool non_finite = false;     // some element was NaN or Inf (other than the poison)
  double max_abs = 0.0;        // over finite elements
  double max_rel = 0.0;        // over finite elements whose reference is not 0
  std::string first_failure;   // the first failing element in row-major order, and why
};

// Writes kPoisonBits (kPoisonBits16 for float16 and bfloat16) into every element of a float tensor.
void poison(const at::Tensor& output);

// Writes a finite poison into every element of a float tensor: +magnitude at even flat
// indices, -magnitude at odd ones. Plausible numbers, unlike the NaN poison: a candidate that reads
// its output before writing it (a running max or min, a "computed already" test) takes them for
// data.
void poison_finite(const at::Tensor& output, float magnitude);

// Elements whose bits differ between two tensors of the same dtype and size.
int64_t count_differing_bits(const at::Tensor& a, const at::Tensor& b);

// `output` against `reference` (same numel; float32 or float16): |out - ref| <= atol + rtol * |ref|,
// computed in float64; NaN and Inf never pass. `shape` and `name` word the first failure
// ("output y[3, 17] is 2.5 but the reference is 2").
Comparison compare_outputs(const at::Tensor& output, const at::Tensor& reference, const kernels::Shape& shape,
                           const std::string& name, const kernels::Tolerance& tolerance,
                           int64_t chunk = kComparisonChunk);

// Bit-for-bit equality of two tensors of the same dtype and size (an input against its
// pristine copy: -0.0 against 0.0 differs, as it should).
bool same_bits(const at::Tensor& a, const at::Tensor& b);

// Elements of `now` that miss `reference`, and how many of those hold, bit for bit, what
// `previous` held: stale answers rather than an inaccurate computation.
struct StaleCount {
  int64_t missing = 0;
  int64_t stale = 0;
};
StaleCount count_stale(const at::Tensor& now, const at::Tensor& previous, const at::Tensor& reference,
                       const kernels::Tolerance& tolerance, int64_t chunk = kComparisonChunk);

// The largest errors of the candidate's and the float32 reference's outputs against a float64
// reference, each relative to the output's scale (max |exact|; 1 when that is 0).
struct PrecisionErrors {
  double candidate = 0.0;
  double reference = 0.0;
};
PrecisionErrors precision_errors(const at::Tensor& candidate, const at::Tensor& reference32,
                                 const at::Tensor& exact64, int64_t chunk = kComparisonChunk);

}  // namespace drk::evaluator
