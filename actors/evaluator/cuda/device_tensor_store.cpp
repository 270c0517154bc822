#include "actors/evaluator/cuda/device_tensor_store.h"

#include "kernels/catalog/reference.h"

namespace drk::evaluator::cuda {

Status DeviceTensorStore::reserve(size_t bytes) {
  if (region_ && region_->size() >= bytes) return {};
  constexpr size_t kGrain = size_t{256} << 20;
  auto grown = DeviceRegion::create((bytes + kGrain - 1) / kGrain * kGrain);
  if (!grown) return grown.error();
  if (region_) retired_ = std::move(region_);
  region_ = std::move(*grown);
  return {};
}

at::Tensor DeviceTensorStore::view(const TensorSlot& slot) {
  return at::from_blob(region_->data() + slot.offset, slot.shape,
                       at::TensorOptions().dtype(kernels::scalar_type_of(slot.dtype)).device(at::kCUDA));
}

void DeviceTensorStore::lend(msg::SandboxRequest::Builder request) const {
  const auto& handle = region_->ipc_handle();
  request.setDeviceRegion(kj::arrayPtr(handle.data(), handle.size()));
  request.setDeviceRegionBytes(region_->size());
}

}  // namespace drk::evaluator::cuda
