// A minimal stand-in for the Evaluator, to test the renderers on their own: compiles rendered
// sources into one shared object per batch (the host compiler, the flags of the candidate ABI),
// dlopen()s it, and calls a kernel on dense float32 (or int64) tensors with a CPU context whose
// workspace and gemm_f32 are plain C++.
//
// Thread-safety: one harness per test thread. Ownership: the harness owns its temporary
// directory and the loaded library; both go when it is destroyed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/abi/drk_kernel.h"
#include "base/result.h"

namespace drk::testing {

// A float32 tensor (values), or an int64 one (dtype DRK_I64: integers, e.g. class indices).
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  int32_t dtype = DRK_F32;
  std::vector<int64_t> integers;
};

class KernelHarness {
 public:
  KernelHarness();
  ~KernelHarness();
  KernelHarness(const KernelHarness&) = delete;
  KernelHarness& operator=(const KernelHarness&) = delete;

  // Compiles every source (two compilers at a time) into one library; kernel i is then
  // called as call(i, ...). compile_error carries the compiler's output and the source.
  Status compile(const std::vector<std::string>& sources);

  // Runs kernel `index`; outputs are preallocated with their shapes and poisoned with NaN.
  int call(size_t index, const std::vector<HostTensor>& inputs, std::vector<HostTensor>& outputs,
           int max_threads = 4);

  int library_calls() const { return library_calls_; }

 private:
  std::string directory_;
  void* library_ = nullptr;
  std::vector<drk_kernel_fn> kernels_;
  int library_calls_ = 0;
};

}  // namespace drk::testing
