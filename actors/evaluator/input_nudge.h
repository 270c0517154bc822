// nudge_inputs(): inputs changed in a few secret places, the rest as they were, for the batch
// that follows the one after timing (docs/verification.md, results_cached).
//
// The batch after timing draws every input afresh, which catches a result cached by address or
// shape. A candidate that keys its shortcut on a sample of the inputs (a few elements, or the
// output already matching them at a few places) computes there, because every sample changed.
// With only a few secret elements changed, its samples still match, it answers from the stale
// output, and the elements the change reaches show the previous answer.
//
// The change swaps kNudgedPairs pairs of elements at positions drawn from the seed, in every
// input: the values stay those of the task's draw (integers stay valid class indices, positive
// draws stay positive), and the same seed gives the same swaps, so that pristine copies can be
// nudged the same way. A swap of equal values, or one the task's output does not depend on
// (two elements of one summed row), changes nothing: that only lowers the check's power.
//
// Thread-safety: a free function; tensors on any device, contiguous, changed in place.
// Errors: none expected; LibTorch throws c10::Error on a non-contiguous tensor (a fault).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace drk::evaluator {

inline constexpr int64_t kNudgedPairs = 32;

void nudge_inputs(std::vector<at::Tensor>& inputs, uint64_t seed);

}  // namespace drk::evaluator
