// compile_cuda(): compiles a CUDA C++ source with NVRTC into a CUBIN for one architecture.
// NVRTC needs no GPU, so this runs on CPU-only compile nodes too (and in CI); the binary is
// then shipped to the GPU node. Kernels to be looked up by name must be `extern "C"`.
//
// Thread-safety: NVRTC programs are independent; call from any thread.
// Errors: compile_error with NVRTC's log (line numbers refer to `source_name`); internal when
// NVRTC itself fails.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace drk::evaluator::cuda {

struct NvrtcOptions {
  std::string architecture = "sm_90";  // the H200
  std::vector<std::string> include_dirs;
  std::string source_name = "candidate.cu";
  bool line_info = true;  // keeps source lines in the binary, for profilers and sanitizers
};

struct CudaBinary {
  std::vector<char> cubin;
  std::string log;  // warnings, when there were any
};

Result<CudaBinary> compile_cuda(const std::string& source, const NvrtcOptions& options);

// "13.0", from NVRTC itself.
std::string nvrtc_version();

}  // namespace drk::evaluator::cuda
