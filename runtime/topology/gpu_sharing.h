// One GPU, one Evaluator: a run on cuda whose topology would put two Evaluators on the same GPU of
// a node is refused before anything starts. Their timed calls would run side by side and skew
// both speedups, and each would fill the device's memory without knowing of the other (the timing
// lock and memory share of shared_gpu.h reach the engines of one process only). An Evaluator
// without `gpu:` evaluates on the first GPU its process sees.
//
// Thread-safety: a pure function. Errors: invalid_argument, one line per GPU shared, naming the
// Evaluators, their entries and the fix.
#pragma once

#include "base/result.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

// Ok when experiment.device is not cuda, or every Evaluator has a GPU of its node to itself.
Status check_one_evaluator_per_gpu(const Topology& topology);

}  // namespace drk::runtime
