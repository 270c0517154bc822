// DeviceTensorStore: a run's tensors in the Evaluator's device memory (device_region.h), lent to
// its CUDA sandbox with every request: inputs are drawn, outputs poisoned and checked on the GPU
// where they are computed (docs/gpu.md, "Device-resident checks"). The contract is TensorStore's
// (engine/tensor_store.h).
//
// Growing: reserve() rounds up to 256 MiB, so that growing one task at a time does not allocate
// every time; the region it replaces is kept until replied() says the sandbox has answered a
// request naming the new one (or is gone), because the sandbox may still map the old one.
// Errors: reserve() returns DeviceRegion's (io_error, unsupported); synchronize() CUDA's error.
#pragma once

#include <optional>

#include "actors/evaluator/cuda/device_region.h"
#include "actors/evaluator/engine/tensor_store.h"

namespace drk::evaluator::cuda {

class DeviceTensorStore final : public TensorStore {
 public:
  Status reserve(size_t bytes) override;
  at::Tensor view(const TensorSlot& slot) override;
  at::Device device() const override { return at::kCUDA; }
  Status synchronize() override { return synchronize_device(); }
  void lend(msg::SandboxRequest::Builder request) const override;
  // The sandbox has answered a request since the last reserve(): a replaced region may go.
  void replied() { retired_.reset(); }
  // Frees every region; only when no sandbox maps them (the evaluation's has gone). The next
  // reserve() allocates afresh.
  void release() {
    retired_.reset();
    region_.reset();
  }

 private:
  std::optional<DeviceRegion> region_, retired_;
};

}  // namespace drk::evaluator::cuda
