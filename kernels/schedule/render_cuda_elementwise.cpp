// CUDA elementwise kernels: y[i] = stages(x[i]). The stages run in groups (fusion: all in one
// kernel, pairs of consecutive stages, or one kernel per stage, as eager execution launches
// them); the first group reads x and writes y, later groups update y in place. Each thread
// moves `vector_width` floats per access (float, float2, float4 when both pointers are aligned
// for it, scalar otherwise) and `elements_per_thread` such vectors per grid-stride step, issued
// as independent loads before any store. `grid`: cover launches enough blocks for one step per
// thread; persistent launches one full wave (SMs x 2048 / threads) that strides over the rest.
#include <algorithm>

#include "kernels/schedule/render_parts.h"
#include "kernels/schedule/stages.h"

namespace drk::schedule::detail {
namespace {

std::string vector_type(int width) {
  if (width == 4) return "float4";
  if (width == 2) return "float2";
  return "float";
}

// drk_apply_G: the group's stages on every lane of a vector.
std::string apply_function(int group, int width) {
  const std::string stage = "drk_group_" + std::to_string(group);
  std::string source = "__device__ __forceinline__ " + vector_type(width) + " drk_apply_" +
                       std::to_string(group) + "(" + vector_type(width) + " v) {\n";
  if (width == 1) {
    source += "  return " + stage + "(v);\n}\n";
    return source;
  }
  const char* lanes[] = {"x", "y", "z", "w"};
  for (int lane = 0; lane < width; ++lane) {
    source += "  v." + std::string(lanes[lane]) + " = " + stage + "(v." + lanes[lane] + ");\n";
  }
  source += "  return v;\n}\n";
  return source;
}

std::string map_kernel(int group) {
  return substitute(R"(
__global__ void __launch_bounds__(kThreads) drk_map_@G@(const float* src, float* dst, int64_t count,
                                                       int64_t vectors) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const drk_vector* src_vectors = reinterpret_cast<const drk_vector*>(src);
  drk_vector* dst_vectors = reinterpret_cast<drk_vector*>(dst);
  for (int64_t base = first; base < vectors; base += stride * kPerThread) {
    drk_vector values[kPerThread];
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
      const int64_t index = base + e * stride;
      if (index < vectors) values[e] = src_vectors[index];
    }
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
      const int64_t index = base + e * stride;
      if (index < vectors) dst_vectors[index] = drk_apply_@G@(values[e]);
    }
  }
  for (int64_t index = vectors * kWidth + first; index < count; index += stride) {
    dst[index] = drk_group_@G@(src[index]);
  }
}
)",
                    {{"G", std::to_string(group)}});
}

}  // namespace

Result<std::string> render_cuda_elementwise(const Problem& problem, const Choice& choice) {
  auto stages = elementwise_stages(problem);
  if (!stages) return stages.error();
  const std::string fusion = choice.value(cuda_elementwise_knob::fusion);
  const size_t group_size = fusion == "fused" ? std::max<size_t>(stages->size(), 1) : fusion == "pairs" ? 2 : 1;
  std::vector<std::vector<std::string>> groups;
  for (size_t first = 0; first < stages->size(); first += group_size) {
    groups.emplace_back(stages->begin() + static_cast<std::ptrdiff_t>(first),
                        stages->begin() + static_cast<std::ptrdiff_t>(std::min(first + group_size, stages->size())));
  }
  if (groups.empty()) groups.emplace_back();  // the identity: one copy kernel
  const int width = numeric_value(choice, cuda_elementwise_knob::vector_width);

  std::string source = cuda_kernel_preamble(problem, choice);
  source += substitute(R"(
namespace {

constexpr int kThreads = @THREADS@;
constexpr int kWidth = @W@;
constexpr int kPerThread = @PER_THREAD@;
using drk_vector = @VECTOR@;

)",
                       {{"THREADS", choice.value(cuda_elementwise_knob::threads)},
                        {"W", std::to_string(width)},
                        {"PER_THREAD", choice.value(cuda_elementwise_knob::elements_per_thread)},
                        {"VECTOR", vector_type(width)}});
  for (size_t group = 0; group < groups.size(); ++group) {
    source += cuda_stage_function("drk_group_" + std::to_string(group), groups[group]);
    source += apply_function(static_cast<int>(group), width);
    source += map_kernel(static_cast<int>(group));
  }
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(1);
  source += substitute(R"(  const drk_tensor& x = inputs[0];
  drk_tensor& y = outputs[0];
  if (!drk_is_dense_f32(x) || !drk_is_dense_f32(y)) return DRK_E_BAD_ARGUMENT;
  if (!drk_same_shape(x, y)) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t count = drk_element_count(x);
  if (count == 0) return DRK_OK;
  const float* src = static_cast<const float*>(x.data);
  float* dst = static_cast<float*>(y.data);
  const bool vectorised = drk_aligned(src, 4 * kWidth) && drk_aligned(dst, 4 * kWidth);
  const int64_t vectors = vectorised ? count / kWidth : 0;
  const int64_t items = vectorised ? vectors : count;
  const unsigned blocks = @PERSISTENT@ ? drk_grid(static_cast<int64_t>(drk_sm_count()) * (2048 / kThreads))
                                       : drk_grid((items + static_cast<int64_t>(kThreads) * kPerThread - 1) /
                                                  (static_cast<int64_t>(kThreads) * kPerThread));
)",
                       {{"PERSISTENT", choice.value(cuda_elementwise_knob::grid) == "persistent" ? "true" : "false"}});
  for (size_t group = 0; group < groups.size(); ++group) {
    source += "  drk_map_" + std::to_string(group) + "<<<blocks, kThreads, 0, stream>>>(" +
              (group == 0 ? "src" : "dst") + ", dst, count, vectors);\n";
  }
  source += "  return drk_launch_status();\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
