// The load_inline benchmark (`drk bench load-inline`): how long a KernelBench candidate's
// load_inline extension takes to build, side by side in one run, for one C++ candidate (and one
// CUDA candidate when the Python's torch has CUDA):
//   torch      torch's own load_inline in a fresh build directory (the Python runs the candidate)
//   cold       ours with an empty cache: extraction, the precompiled torch/extension.h, the build
//   pch        ours with the precompiled header present and the cache cold (a candidate seen for
//              the first time on a machine that built the header once: the common case); the
//              median over `samples` candidates new to the cache
//   warm       ours on a cache hit, the median over `samples`
//   wide       as pch, with every unit compiled with torch/extension.h, the narrow headers off
//              (narrow_torch_headers.h): the median over `samples`
//   whole      (CUDA) as pch, with cuda.cu compiled whole by nvcc as torch does, not split
//              (cuda_source_split.h): the median over `samples`
//   same bindings  (CUDA) as pch, a new kernel behind main.cpp's bindings built before
//   headers only   (C++) as pch, a main.cpp of torch's headers and no code: what GCC spends at the
//              end of every unit that includes them, which no precompiled header holds
// The torch facts are read once before (one torch import per machine) and not counted. Each
// build's time is printed (and flushed) as it ends, then each kind's line of medians.
//
// Thread-safety: one thread. Errors: the exit code (0; 1 when the Python has no torch, a build
// fails, or cuda is asked of a torch without CUDA), with the reason printed to `out`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace drk::bench {

struct LoadInlineBenchOptions {
  std::string python = "/usr/bin/python3";  // a Python with torch (and nvcc for CUDA candidates)
  std::string cuda_architecture = "sm_90";
  std::vector<std::string> kinds;  // "cpp", "cuda"; empty: cpp, and cuda when the torch has CUDA
  int samples = 3;
  bool json = false;
};

int run_load_inline_bench(const LoadInlineBenchOptions& options, std::ostream& out);

}  // namespace drk::bench
