#include "actors/evaluator/engine/shared_gpu.h"

#include <memory>
#include <mutex>

#include "actors/evaluator/engine/device_memory_share.h"
#include "actors/evaluator/engine/evaluation_device.h"

namespace drk::evaluator {

void share_one_gpu(EngineOptions& options, size_t engines) {
  if (options.device != kernels::DeviceKind::cuda || engines < 2) return;
  options.device_timing_lock = std::make_shared<std::mutex>();
  options.device_memory_share = std::make_shared<DeviceMemoryShare>(free_device_memory);
}

}  // namespace drk::evaluator
