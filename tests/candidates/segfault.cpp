// Bad candidate: writes through a null pointer (SIGSEGV in the sandbox).
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  volatile float* nowhere = nullptr;
  *nowhere = 1.0f;
  return DRK_OK;
}
