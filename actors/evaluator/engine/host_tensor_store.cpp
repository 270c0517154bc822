#include "actors/evaluator/engine/host_tensor_store.h"

#include "kernels/catalog/reference.h"

namespace drk::evaluator {

at::Tensor HostTensorStore::view(const TensorSlot& slot) {
  return at::from_blob(region_.data() + slot.offset, slot.shape,
                       at::TensorOptions().dtype(kernels::scalar_type_of(slot.dtype)));
}

}  // namespace drk::evaluator
