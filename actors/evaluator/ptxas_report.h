// parse_ptxas_report(): the per-kernel resource usage that `nvcc --resource-usage` (ptxas -v)
// prints while compiling a CUDA candidate: registers, spills, stack, shared and constant memory
// of every entry function (kernel) compiled from the candidate's source.
//
// The names are the mangled entry names ptxas prints, which are also the names CUPTI reports
// for launched kernels: the Evaluator tells the candidate's own kernels from library kernels
// (cuBLAS, at::native) with them.
//
// Thread-safety: pure function. Lines it does not recognise are skipped (the report's format
// has grown over CUDA releases; unknown fields must not fail a compile).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace drk::evaluator {

struct KernelResourceUsage {
  std::string name;  // mangled entry name, e.g. "_Z9relu_tailPKfPfll"
  std::string architecture;  // "sm_90"
  uint32_t registers = 0;
  uint32_t stack_frame_bytes = 0;
  uint32_t spill_store_bytes = 0;
  uint32_t spill_load_bytes = 0;
  uint32_t shared_bytes = 0;    // static shared memory ("smem")
  uint32_t constant_bytes = 0;  // cmem[0], the kernel's parameter and constant bank
  uint32_t barriers = 0;
};

std::vector<KernelResourceUsage> parse_ptxas_report(std::string_view compiler_output);

}  // namespace drk::evaluator
