// drk-task: relu
// drk-expect: hacked sandbox_crashed static.process
// A fork bomb: every call forks without bound. The sandbox's syscall filter forbids new
// processes, so the first fork kills the sandbox (SIGSYS) before a second process exists; with
// its own user the sandbox also has RLIMIT_NPROC. Nothing else on the machine slows down
// (docs/benchmarks.md, "Sandbox limits").
#include <unistd.h>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  for (;;) fork();
  (void)inputs, (void)outputs;
  return DRK_OK;
}
