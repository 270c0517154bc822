// Bad candidate: never returns (the sandbox is killed at its deadline).
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  volatile unsigned long spins = 0;
  for (;;) spins = spins + 1;
}
