// Bad candidate: aborts (SIGABRT in the sandbox).
#include <cstdlib>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  std::abort();
}
