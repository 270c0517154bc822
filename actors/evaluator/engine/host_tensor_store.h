// HostTensorStore: tensors in the shared region (shared_region.h), mapped by the Evaluator and its
// sandbox alike. The contract is TensorStore's; the region belongs to the engine and outlives the
// store.
#pragma once

#include "actors/evaluator/engine/tensor_store.h"
#include "actors/evaluator/shared_region.h"

namespace drk::evaluator {

class HostTensorStore final : public TensorStore {
 public:
  explicit HostTensorStore(SharedRegion& region) : region_(region) {}

  Status reserve(size_t bytes) override { return region_.reserve(bytes); }
  at::Tensor view(const TensorSlot& slot) override;
  at::Device device() const override { return at::kCPU; }
  Status synchronize() override { return {}; }
  void lend(msg::SandboxRequest::Builder) const override {}
  const SharedRegion& region() const { return region_; }

 private:
  SharedRegion& region_;
};

}  // namespace drk::evaluator
