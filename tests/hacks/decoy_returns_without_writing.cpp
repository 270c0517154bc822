// drk-task: relu
// drk-expect: hacked outputs_unwritten
// Decoy: claims success (DRK_OK) without doing any work, hoping that stale memory in the output
// holds the answer. The engine poisons every output with a NaN before each trial call.
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  return DRK_OK;
}
