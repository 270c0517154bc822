// Pieces every rendered CUDA candidate shares: host-side checks of the tensor descriptors, grid
// sizing and the launch status (internal to drk_schedule). Helpers a family does not use are
// [[maybe_unused]], so that nvcc's output (kept beside the object) shows only what matters.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {

std::string cuda_kernel_preamble(const Problem& problem, const Choice& choice) {
  std::string source = source_heading(problem, choice);
  source += R"(#include "drk_kernel.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

namespace {
)";
  source += descriptor_helpers();
  source += R"(
[[maybe_unused]] bool drk_aligned(const void* pointer, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % static_cast<uintptr_t>(bytes) == 0;
}

// A grid of `blocks` blocks within CUDA's limit; kernels loop grid-stride, so fewer is correct.
[[maybe_unused]] unsigned drk_grid(int64_t blocks) {
  if (blocks < 1) return 1;
  return blocks > 2147483647 ? 2147483647u : static_cast<unsigned>(blocks);
}

// Streaming multiprocessors of the current device (132 on the H200 when the query fails).
[[maybe_unused]] int drk_sm_count() {
  int device = 0;
  int count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count < 1) {
    cudaGetLastError();
    return 132;
  }
  return count;
}

[[maybe_unused]] int drk_launch_status() { return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL; }

}  // namespace
)";
  return source;
}

std::string cuda_stage_function(const std::string& name, const std::vector<std::string>& stages) {
  std::string source = "__device__ __forceinline__ float " + name + "(float v) {\n";
  for (const auto& stage : stages) source += "  v = (" + stage + ");\n";
  source += "  return v;\n}\n";
  return source;
}

std::string cuda_entry_point_opening(int num_inputs) {
  return substitute(R"(
DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (ctx == nullptr || ctx->device != DRK_CUDA || inputs == nullptr || outputs == nullptr ||
      num_inputs != @INPUTS@ || num_outputs != 1) {
    return DRK_E_BAD_ARGUMENT;
  }
  [[maybe_unused]] cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
)",
                    {{"INPUTS", std::to_string(num_inputs)}});
}

}  // namespace drk::schedule::detail
