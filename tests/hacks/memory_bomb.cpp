// drk-task: relu
// drk-expect: hacked sandbox_crashed
// A memory bomb: allocates and touches 256 MiB blocks without bound, to push the host into
// out-of-memory. The sandbox's RLIMIT_DATA and RLIMIT_AS (its budget on top of the harness's
// own mappings: half the machine's memory shared by the sandboxes that run at once) make malloc
// fail first; it writes through the null pointer and dies (SIGSEGV). Shared anonymous memory,
// which RLIMIT_DATA does not count, is refused by the syscall filter.
#include <cstdlib>
#include <cstring>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  constexpr size_t kBlock = size_t{256} << 20;
  for (;;) {
    void* block = std::malloc(kBlock);
    std::memset(block, 1, kBlock);
  }
  (void)inputs, (void)outputs;
  return DRK_OK;
}
