// Engines of one process that evaluate on one GPU at once (`drk bench kernelbench --jobs N`, the
// workers of `drk serve` and `drk bench gateway` on cuda): they must take turns to time, else one
// engine's timed calls run beside another's work and both speedups are wrong, and they must share
// the device's memory (device_memory_share.h), else a large problem fails out of memory beside
// another. share_one_gpu() sets both up in the options the engines are made from.
//
// Thread-safety: call before the engines are made. Errors: none.
#pragma once

#include <cstddef>

#include "actors/evaluator/evaluation.h"

namespace drk::evaluator {

// With `engines` > 1 on cuda: one EngineOptions::device_timing_lock and one device_memory_share
// (measured by the first claim: free_device_memory()) for every engine made from `options` or its
// copies. Otherwise `options` is left as it is: an engine alone has the device to itself.
void share_one_gpu(EngineOptions& options, size_t engines);

}  // namespace drk::evaluator
