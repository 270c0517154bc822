// The CUDA device count of this machine, for `gpus: all` (runtime/topology/visible_gpus.h).
//
// Counted in a forked child that exits at once, so that drk itself never starts the CUDA
// driver: a process that has (the head, when it hosts actors of its own) could not hand CUDA to
// what it forks, and the count would cost every run the driver's memory. A build without CUDA,
// a machine without a driver or device: an error saying which (read as no GPU).
//
// Thread-safety: call from the main thread before threads that hold locks the child needs exist
// (`drk run` does, before it starts anything).
#pragma once

#include "base/result.h"
#include "runtime/topology/visible_gpus.h"

namespace drk::tools {

Result<int> cuda_device_count();

// This machine's GPUs as `drk run`, `drk generate` and `drk serve` load a topology with them:
// CUDA_VISIBLE_DEVICES, else cuda_device_count() (runtime/topology/visible_gpus.h).
runtime::VisibleGpusQuery this_machine_gpus();

}  // namespace drk::tools
