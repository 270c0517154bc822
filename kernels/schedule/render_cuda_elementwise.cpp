// CUDA elementwise kernels: y[i] = stages(x[i]). The stages run in groups (fusion: all in one
// kernel, pairs of consecutive stages, or one kernel per stage, as eager execution launches
// them); the first group reads x and writes y, later groups update y in place. Each thread
// moves `vector_width` floats per access (float, float2, float4 when both pointers are aligned
// for it, scalar otherwise) and `elements_per_thread` such vectors per grid-stride step, issued
// as independent loads before any store. `grid`: cover launches enough blocks for one step per
// thread; persistent launches one full wave (SMs x 2048 / threads) that strides over the rest.
//
// float16 and bfloat16 tasks: the same kernels over 16-bit elements, `vector_width` x 4 bytes
// per access as for float32 (2, 4 or 8 elements), each widened to float32, the stages run in
// float32 and the result rounded once to nearest even on the store (cuda_fp16.h, cuda_bf16.h:
// a NaN stays a NaN). Groups after the first work in a float32 workspace (ctx->workspace), as
// the cpu space does, so that no intermediate is rounded to 16 bits: the first group reads x
// into it, the last writes y from it.
//
// FP8 tasks: the bfloat16 path's kernels, but the first group reads bytes (4 x `vector_width` a
// thread per access, the float32 kernel's bytes), each decoded by CUDA's FP8 conversion
// (cuda_fp8.h) and multiplied by the scale, which every thread reads once from device memory.
#include <algorithm>
#include <optional>

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

// The map kernel of group G: `kPerThread` vectors loaded per grid-stride step before any store,
// then the scalar tail. The types and the per-vector store are the precision's (MapTypes).
struct MapTypes {
  std::string in, out;                // element types of src and dst
  std::string in_vector, out_vector;  // their vectors
  std::string lanes;                  // elements per vector
  std::string store;                  // stores the group's result for values[e] at dst_vectors[index]
  std::string tail;                   // the same for one element, dst[index] from src[index]
  std::string parameters = "";        // more kernel parameters
  std::string prologue = "";          // the kernel's first statements
};

std::string map_kernel(int group, const MapTypes& types) {
  return substitute(substitute(R"(
__global__ void __launch_bounds__(kThreads) drk_map_@G@(const @IN@* src, @OUT@* dst, int64_t count,
                                                       int64_t vectors@PARAMETERS@) {
@PROLOGUE@  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const @IN_VECTOR@* src_vectors = reinterpret_cast<const @IN_VECTOR@*>(src);
  @OUT_VECTOR@* dst_vectors = reinterpret_cast<@OUT_VECTOR@*>(dst);
  for (int64_t base = first; base < vectors; base += stride * kPerThread) {
    @IN_VECTOR@ values[kPerThread];
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
      const int64_t index = base + e * stride;
      if (index < vectors) values[e] = src_vectors[index];
    }
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
      const int64_t index = base + e * stride;
@STORE@
    }
  }
  for (int64_t index = vectors * @LANES@ + first; index < count; index += stride) {
    @TAIL@
  }
}
)",
                               {{"IN", types.in},
                                {"OUT", types.out},
                                {"IN_VECTOR", types.in_vector},
                                {"OUT_VECTOR", types.out_vector},
                                {"LANES", types.lanes},
                                {"STORE", types.store},
                                {"TAIL", types.tail},
                                {"PARAMETERS", types.parameters},
                                {"PROLOGUE", types.prologue}}),
                    {{"G", std::to_string(group)}});
}

const MapTypes kFloatMap{"float",
                         "float",
                         "drk_vector",
                         "drk_vector",
                         "kWidth",
                         "      if (index < vectors) dst_vectors[index] = drk_apply_@G@(values[e]);",
                         "dst[index] = drk_group_@G@(src[index]);"};

// 16-bit tensors, or the float32 workspace between groups: each lane widened, the stages, each
// result rounded into its element. `widen` reads one element as float (@V@ is the element).
MapTypes half_map(const std::string& in, const std::string& out, const std::string& widen = "drk_get(@V@)") {
  return {in,
          out,
          "drk_pack<" + in + ">",
          "drk_pack<" + out + ">",
          "kLanes",
          R"(      if (index >= vectors) continue;
      drk_pack<)" + out + R"(> results;
#pragma unroll
      for (int lane = 0; lane < kLanes; ++lane) drk_set(&results.lane[lane], drk_group_@G@()" +
              substitute(widen, {{"V", "values[e].lane[lane]"}}) + R"());
      dst_vectors[index] = results;)",
          "drk_set(dst + index, drk_group_@G@(" + substitute(widen, {{"V", "src[index]"}}) + "));"};
}

// FP8 bytes into `out` (bfloat16, or the float32 workspace): each byte decoded and scaled.
MapTypes float8_map(const std::string& out) {
  MapTypes types = half_map("uint8_t", out, "drk_dequantise(@V@, scale)");
  types.parameters = ", const float* __restrict__ scale_at";
  types.prologue = "  const float scale = *scale_at;\n";
  return types;
}

// The FP8 path's decoding (on top of the bfloat16 path's helpers): a byte of the format times the scale.
std::string float8_helpers(Precision precision) {
  return substitute(R"(
[[maybe_unused]] __device__ __forceinline__ float drk_dequantise(uint8_t byte, float scale) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(byte, @FORMAT@))) * scale;
}
)",
                    {{"FORMAT", precision == Precision::float8_e4m3fn ? "__NV_E4M3" : "__NV_E5M2"}});
}

// The 16-bit path's element access and vector. `drk_element` is the tensors' C type (__half or
// __nv_bfloat16); drk_get widens one element (or a float of the workspace), drk_set rounds into
// one. drk_pack<T> is `kLanes` elements of T, aligned for one access.
std::string half_helpers(const CudaSixteenBit& names) {
  return substitute(R"(
using drk_element = @ELEMENT@;

template <typename T>
struct alignas(sizeof(T) * kLanes) drk_pack {
  T lane[kLanes];
};

[[maybe_unused]] __device__ __forceinline__ float drk_get(float value) { return value; }
[[maybe_unused]] __device__ __forceinline__ float drk_get(drk_element value) { return @TO_FLOAT@(value); }
[[maybe_unused]] __device__ __forceinline__ void drk_set(float* out, float value) { *out = value; }
[[maybe_unused]] __device__ __forceinline__ void drk_set(drk_element* out, float value) { *out = @FROM_FLOAT@(value); }
)",
                    {{"ELEMENT", names.type}, {"TO_FLOAT", names.to_float}, {"FROM_FLOAT", names.from_float}});
}

// The launches of a 16-bit candidate: one group x -> y; several x -> workspace -> ... -> y. An FP8
// one's x is bytes, and its first group reads the scale.
std::string half_launches(size_t groups, bool persistent, bool float8) {
  std::string source = float8 ? "  const uint8_t* src = static_cast<const uint8_t*>(x.data);\n"
                              : "  const drk_element* src = static_cast<const drk_element*>(x.data);\n";
  source += "  drk_element* dst = static_cast<drk_element*>(y.data);\n";
  if (groups > 1) {
    source += R"(  if (ctx->workspace == nullptr) return DRK_E_WORKSPACE;
  float* scratch = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(count) * sizeof(float)));
  if (scratch == nullptr) return DRK_E_WORKSPACE;
)";
  }
  source += R"(  const bool vectorised = drk_aligned(src, sizeof(*src) * kLanes) &&
                          drk_aligned(dst, sizeof(*dst) * kLanes)@SCRATCH_ALIGNED@;
  const int64_t vectors = vectorised ? count / kLanes : 0;
  const int64_t items = vectorised ? vectors : count;
  const unsigned blocks = @PERSISTENT@ ? drk_grid(static_cast<int64_t>(drk_sm_count()) * (2048 / kThreads))
                                       : drk_grid((items + static_cast<int64_t>(kThreads) * kPerThread - 1) /
                                                  (static_cast<int64_t>(kThreads) * kPerThread));
)";
  source = substitute(source, {{"SCRATCH_ALIGNED", groups > 1 ? " && drk_aligned(scratch, sizeof(float) * kLanes)" : ""},
                               {"PERSISTENT", persistent ? "true" : "false"}});
  for (size_t group = 0; group < groups; ++group) {
    const std::string from = group == 0 ? "src" : "scratch";
    const std::string to = group + 1 == groups ? "dst" : "scratch";
    source += "  drk_map_" + std::to_string(group) + "<<<blocks, kThreads, 0, stream>>>(" + from + ", " + to +
              ", count, vectors" + (float8 && group == 0 ? ", scale" : "") + ");\n";
  }
  return source;
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
  const bool persistent = choice.value(cuda_elementwise_knob::grid) == "persistent";
  // An FP8 task writes bfloat16: the bfloat16 path, reading bytes in its first group.
  const bool float8 = is_float8(problem.precision);
  const std::optional<CudaSixteenBit> names =
      problem.precision == Precision::float32
          ? std::nullopt
          : std::optional(cuda_sixteen_bit(float8 ? Precision::bfloat16 : problem.precision));
  const bool half = names.has_value();

  std::string source = cuda_kernel_preamble(problem, choice);
  if (half) source += names->include;
  if (float8) source += "#include <cuda_fp16.h>\n#include <cuda_fp8.h>\n";
  source += substitute(R"(
namespace {

constexpr int kThreads = @THREADS@;
constexpr int kWidth = @W@;
constexpr int kPerThread = @PER_THREAD@;
)",
                       {{"THREADS", choice.value(cuda_elementwise_knob::threads)},
                        {"W", std::to_string(width)},
                        {"PER_THREAD", choice.value(cuda_elementwise_knob::elements_per_thread)}});
  if (half) {
    // As many bytes per access as the float32 kernel's: twice as many 16-bit elements, four times
    // as many FP8 ones.
    source += float8 ? "constexpr int kLanes = 4 * kWidth;\n" : "constexpr int kLanes = 2 * kWidth;\n";
    source += half_helpers(*names);
    source += dense_check(names->dense, names->dtype);
    if (float8) source += float8_checks(problem.precision) + float8_helpers(problem.precision);
  } else {
    source += "using drk_vector = " + vector_type(width) + ";\n\n";
  }
  for (size_t group = 0; group < groups.size(); ++group) {
    source += cuda_stage_function("drk_group_" + std::to_string(group), groups[group]);
    if (half) {
      const std::string out = group + 1 == groups.size() ? "drk_element" : "float";
      source += map_kernel(static_cast<int>(group),
                           float8 && group == 0 ? float8_map(out) : half_map(group == 0 ? "drk_element" : "float", out));
    } else {
      source += apply_function(static_cast<int>(group), width);
      source += map_kernel(static_cast<int>(group), kFloatMap);
    }
  }
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(float8 ? 2 : 1);
  if (float8) {
    source += R"(  const drk_tensor& x_scale = inputs[1];
  if (!drk_is_dense_f8(inputs[0]) || !drk_is_scale(x_scale)) return DRK_E_BAD_ARGUMENT;
  const float* scale = static_cast<const float*>(x_scale.data);
)";
  }
  source += substitute(R"(  const drk_tensor& x = inputs[0];
  drk_tensor& y = outputs[0];
  if (!@X_DENSE@(x) || !@DENSE@(y)) return DRK_E_BAD_ARGUMENT;
  if (!drk_same_shape(x, y)) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t count = drk_element_count(x);
  if (count == 0) return DRK_OK;
)",
                       {{"DENSE", half ? names->dense : "drk_is_dense_f32"},
                        {"X_DENSE", float8 ? "drk_is_dense_f8" : half ? names->dense : "drk_is_dense_f32"}});
  if (half) {
    source += half_launches(groups.size(), persistent, float8);
    source += "  return drk_launch_status();\n}\n";
    return source;
  }
  source += substitute(R"(  const float* src = static_cast<const float*>(x.data);
  float* dst = static_cast<float*>(y.data);
  const bool vectorised = drk_aligned(src, 4 * kWidth) && drk_aligned(dst, 4 * kWidth);
  const int64_t vectors = vectorised ? count / kWidth : 0;
  const int64_t items = vectorised ? vectors : count;
  const unsigned blocks = @PERSISTENT@ ? drk_grid(static_cast<int64_t>(drk_sm_count()) * (2048 / kThreads))
                                       : drk_grid((items + static_cast<int64_t>(kThreads) * kPerThread - 1) /
                                                  (static_cast<int64_t>(kThreads) * kPerThread));
)",
                       {{"PERSISTENT", persistent ? "true" : "false"}});
  for (size_t group = 0; group < groups.size(); ++group) {
    source += "  drk_map_" + std::to_string(group) + "<<<blocks, kThreads, 0, stream>>>(" +
              (group == 0 ? "src" : "dst") + ", dst, count, vectors);\n";
  }
  source += "  return drk_launch_status();\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
