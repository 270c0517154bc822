// The GPUs of this machine that a topology's `gpus:` may place Evaluators on, as the indices a
// process is pinned to (CUDA_VISIBLE_DEVICES=k; `gpu:` in docs/topology.md).
//
// They are CUDA_VISIBLE_DEVICES's entries when it is set (the devices the user gave this run:
// "2,3" gives 2 and 3), else 0 .. N-1 for the CUDA device count N. The count comes through a
// function object, so that the runtime (which links no CUDA) and its tests (which have no GPU)
// both supply one: drk counts with the CUDA runtime (tools/drk/cuda_device_count.h).
//
// Thread-safety: free functions. Errors: invalid_argument for a CUDA_VISIBLE_DEVICES that names
// a device by anything but its index (a UUID, a MIG instance), naming the variable and the fix.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::runtime {

// The CUDA device count of this machine; an error (no driver, no device, a build without CUDA)
// reads as no GPU, and its message says why.
using CudaDeviceCount = std::function<Result<int>()>;

struct VisibleGpus {
  std::vector<int> devices;  // in the order CUDA numbers them
  // Where they came from, for messages: "CUDA_VISIBLE_DEVICES=2,3", "2 CUDA devices",
  // "no CUDA device (no driver)".
  std::string source;
};

// `cuda_visible_devices`: the variable's value, nullopt when it is not set. As CUDA does, the
// list ends at "-1"; an empty value shows no device. `count` is only asked when the variable is
// not set.
Result<VisibleGpus> visible_gpus(const std::optional<std::string>& cuda_visible_devices,
                                 const CudaDeviceCount& count);

// The same for this process: its CUDA_VISIBLE_DEVICES and `count`.
Result<VisibleGpus> visible_gpus_of_this_process(const CudaDeviceCount& count);

// How `drk run` reads this machine's GPUs; empty: `gpus: all` cannot be resolved (the loading
// says so) and lists are not checked against the machine.
using VisibleGpusQuery = std::function<Result<VisibleGpus>()>;

}  // namespace drk::runtime
