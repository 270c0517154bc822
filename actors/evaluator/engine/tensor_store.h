// TensorStore: where an evaluation's tensors live while its sandbox reads and writes them: the
// shared region (host_tensor_store.h), or device memory the Evaluator lends to a CUDA sandbox
// (cuda/device_tensor_store.h). Offsets are a Layout's (buffer_layout.h).
//
// Ownership: the engine owns its stores; a run (evaluation_run.h) points at the one it uses.
// Thread-safety: not thread-safe; the engine's thread only.
// Errors: reserve() and synchronize() return the memory's or the device's error.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>

#include "actors/evaluator/engine/buffer_layout.h"
#include "base/result.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

class TensorStore {
 public:
  virtual ~TensorStore() = default;
  // Room for `bytes` of tensors; views made before a reserve that grew the store are invalid.
  virtual Status reserve(size_t bytes) = 0;
  // A tensor over `slot`, in place.
  virtual at::Tensor view(const TensorSlot& slot) = 0;
  // LibTorch's device of the views.
  virtual at::Device device() const = 0;
  // Device memory: inputs are drawn in place and drawn again for their pristine copies (no host
  // copies kept); false: the shared region, with pristine copies kept on the host.
  bool on_device() const { return !device().is_cpu(); }
  // The work this process queued on the store's memory (draws, poison) done before the sandbox
  // runs.
  virtual Status synchronize() = 0;
  // Names the store's memory in a request: the device memory lent; nothing for the shared region,
  // which every request names by its size.
  virtual void lend(msg::SandboxRequest::Builder request) const = 0;
};

}  // namespace drk::evaluator
