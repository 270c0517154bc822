// Pieces every rendered CUDA candidate shares: host-side checks of the tensor descriptors, grid
// sizing and the launch status (internal to drk_schedule). Helpers a family does not use are
// [[maybe_unused]], so that nvcc's output (kept beside the object) shows only what matters.
#include "kernels/schedule/render_parts.h"

#include <cctype>

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

CudaSixteenBit cuda_sixteen_bit(Precision precision) {
  if (precision == Precision::bfloat16) {
    return {"\n#include <cuda_bf16.h>\n", "__nv_bfloat16", "__nv_bfloat162", "__bfloat162float", "__float2bfloat16_rn",
            "__ushort_as_bfloat16", "__halves2bfloat162", "drk_is_dense_bf16", "DRK_BF16"};
  }
  return {"\n#include <cuda_fp16.h>\n", "__half", "__half2", "__half2float", "__float2half_rn",
          "__ushort_as_half", "__halves2half2", "drk_is_dense_f16", "DRK_F16"};
}

std::string cuda_stage_function(const std::string& name, const std::vector<std::string>& stages,
                                const std::string& extra_parameters) {
  std::string source = "__device__ __forceinline__ float " + name + "(float v" + extra_parameters + ") {\n";
  for (const auto& stage : stages) source += "  v = (" + stage + ");\n";
  source += "  return v;\n}\n";
  return source;
}

Result<std::vector<std::string>> channel_input_names(const Problem& problem, size_t first) {
  std::vector<std::string> names;
  for (size_t index = first; index < problem.inputs.size(); ++index) {
    const std::string& name = problem.inputs[index].name;
    bool identifier = !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) == 0;
    for (char character : name) {
      identifier = identifier && (std::isalnum(static_cast<unsigned char>(character)) != 0 || character == '_');
    }
    if (!identifier || name == "v" || name == "c") {
      return make_error(Errc::invalid_argument,
                        "task '" + problem.task + "': input '" + name +
                            "' cannot be read by the epilogue: name it with a C identifier other than v and c");
    }
    names.push_back(name);
  }
  return names;
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

std::string cuda_stat_protocol() {
  return R"(
// One statistic of a row; what m, s and c hold depends on the op.
struct drk_stat {
  float m;
  float s;
  float c;
};

template <int P> __device__ drk_stat drk_identity();
template <int P> __device__ drk_stat drk_add(drk_stat acc, float v, const drk_stat& between);
template <int P> __device__ drk_stat drk_merge(drk_stat x, drk_stat y);
)";
}

std::string cuda_single_statistic() {
  return R"(
template <> __device__ drk_stat drk_identity<1>() { return {0.0f, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<1>(drk_stat acc, float, const drk_stat&) { return acc; }
template <> __device__ drk_stat drk_merge<1>(drk_stat x, drk_stat) { return x; }
__device__ drk_stat drk_between(drk_stat first, int64_t) { return first; }
)";
}

std::string cuda_softmax_statistics(bool online) {
  if (online) {
    return R"(
constexpr int kStatPasses = 1;
template <> __device__ drk_stat drk_identity<0>() { return {-INFINITY, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<0>(drk_stat acc, float v, const drk_stat&) {
  if (v > acc.m) {
    acc.s = acc.s * expf(acc.m - v) + 1.0f;
    acc.m = v;
  } else {
    acc.s += expf(v - acc.m);
  }
  return acc;
}
template <> __device__ drk_stat drk_merge<0>(drk_stat x, drk_stat y) {
  const float m = fmaxf(x.m, y.m);
  float s = 0.0f;
  if (x.s > 0.0f) s += x.s * expf(x.m - m);
  if (y.s > 0.0f) s += y.s * expf(y.m - m);
  return {m, s, 0.0f};
}
)" + cuda_single_statistic() +
           R"(
__device__ drk_stat drk_result(drk_stat first, drk_stat, int64_t) { return first; }
)";
  }
  return R"(
constexpr int kStatPasses = 2;
template <> __device__ drk_stat drk_identity<0>() { return {-INFINITY, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<0>(drk_stat acc, float v, const drk_stat&) {
  acc.m = fmaxf(acc.m, v);
  return acc;
}
template <> __device__ drk_stat drk_merge<0>(drk_stat x, drk_stat y) { return {fmaxf(x.m, y.m), 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_identity<1>() { return {0.0f, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<1>(drk_stat acc, float v, const drk_stat& between) {
  acc.s += expf(v - between.m);
  return acc;
}
template <> __device__ drk_stat drk_merge<1>(drk_stat x, drk_stat y) { return {0.0f, x.s + y.s, 0.0f}; }
__device__ drk_stat drk_between(drk_stat first, int64_t) { return first; }
__device__ drk_stat drk_result(drk_stat first, drk_stat second, int64_t) { return {first.m, second.s, 0.0f}; }
)";
}

std::string cuda_stat_reductions() {
  return R"(
template <int P> __device__ drk_stat drk_warp_all(drk_stat s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    drk_stat other;
    other.m = __shfl_xor_sync(0xffffffffu, s.m, offset);
    other.s = __shfl_xor_sync(0xffffffffu, s.s, offset);
    other.c = __shfl_xor_sync(0xffffffffu, s.c, offset);
    s = drk_merge<P>(s, other);
  }
  // Lane 0's value for every lane: merges need not be bitwise symmetric (Welford).
  s.m = __shfl_sync(0xffffffffu, s.m, 0);
  s.s = __shfl_sync(0xffffffffu, s.s, 0);
  s.c = __shfl_sync(0xffffffffu, s.c, 0);
  return s;
}

// Every thread of the block gets the merge of every thread's `s`; `scratch` holds kWarps + 1.
template <int P> __device__ drk_stat drk_block_all(drk_stat s, drk_stat* scratch) {
  s = drk_warp_all<P>(s);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = s;
  __syncthreads();
  if (warp == 0) {
    drk_stat partial = lane < kWarps ? scratch[lane] : drk_identity<P>();
    partial = drk_warp_all<P>(partial);
    if (lane == 0) scratch[kWarps] = partial;
  }
  __syncthreads();
  s = scratch[kWarps];
  __syncthreads();
  return s;
}

// Column blocks: lane l of every warp holds a partial of column l; all get the merge.
template <int P> __device__ drk_stat drk_slices_all(drk_stat s, drk_stat (*partial)[33]) {
  const int lane = threadIdx.x % 32;
  const int slice = threadIdx.x / 32;
  partial[slice][lane] = s;
  __syncthreads();
  if (slice == 0) {
    for (int other = 1; other < kWarps; ++other) s = drk_merge<P>(s, partial[other][lane]);
    partial[0][lane] = s;
  }
  __syncthreads();
  s = partial[0][lane];
  __syncthreads();
  return s;
}
)";
}

std::string cuda_element_access(const std::optional<CudaSixteenBit>& names) {
  std::string source = R"(
[[maybe_unused]] __device__ __forceinline__ float drk_widen(float v) { return v; }
[[maybe_unused]] __device__ __forceinline__ float4 drk_load4(const float* in, int64_t i) {
  return reinterpret_cast<const float4*>(in)[i];
}
)";
  if (!names) {
    return source + R"(using drk_element = float;
[[maybe_unused]] __device__ __forceinline__ float drk_narrow(float v) { return v; }
[[maybe_unused]] __device__ __forceinline__ void drk_store4(float* out, int64_t i, float4 v) {
  reinterpret_cast<float4*>(out)[i] = v;
}
)";
  }
  return source + substitute(R"(using drk_element = @T@;
struct alignas(8) drk_quad {
  @T@ lane[4];
};
[[maybe_unused]] __device__ __forceinline__ float drk_widen(@T@ v) { return @TO_FLOAT@(v); }
[[maybe_unused]] __device__ __forceinline__ @T@ drk_narrow(float v) { return @FROM_FLOAT@(v); }
[[maybe_unused]] __device__ __forceinline__ float4 drk_load4(const @T@* in, int64_t i) {
  const drk_quad q = reinterpret_cast<const drk_quad*>(in)[i];
  return make_float4(drk_widen(q.lane[0]), drk_widen(q.lane[1]), drk_widen(q.lane[2]), drk_widen(q.lane[3]));
}
[[maybe_unused]] __device__ __forceinline__ void drk_store4(@T@* out, int64_t i, float4 v) {
  drk_quad q;
  q.lane[0] = drk_narrow(v.x);
  q.lane[1] = drk_narrow(v.y);
  q.lane[2] = drk_narrow(v.z);
  q.lane[3] = drk_narrow(v.w);
  reinterpret_cast<drk_quad*>(out)[i] = q;
}
)",
                             {{"T", names->type}, {"TO_FLOAT", names->to_float}, {"FROM_FLOAT", names->from_float}});
}

std::string cuda_row_statistics() {
  return R"(
// A row's elements as float: one (drk_widen), or four from an aligned vector (drk_load4), as
// cuda_element_access declares them before this text.
template <int P, typename T>
__device__ drk_stat drk_row_pass(const T* in, int64_t n, int part, int parts, bool vectorised,
                                 const drk_stat& between) {
  drk_stat acc = drk_identity<P>();
  int64_t start = 0;
  if (kWidth == 4 && vectorised) {
    const int64_t n4 = n / 4;
    for (int64_t i = part; i < n4; i += parts) {
      const float4 v = drk_load4(in, i);
      acc = drk_add<P>(acc, v.x, between);
      acc = drk_add<P>(acc, v.y, between);
      acc = drk_add<P>(acc, v.z, between);
      acc = drk_add<P>(acc, v.w, between);
    }
    start = n4 * 4;
  }
  for (int64_t i = start + part; i < n; i += parts) acc = drk_add<P>(acc, drk_widen(in[i]), between);
  return acc;
}

// The row's statistics (drk_result), in every one of its `parts` threads (a warp, or the block).
template <bool kBlock, typename T>
__device__ drk_stat drk_row_result(const T* in, int64_t n, int part, int parts, bool vectorised,
                                   drk_stat* scratch) {
  drk_stat first = drk_row_pass<0>(in, n, part, parts, vectorised, drk_identity<0>());
  first = kBlock ? drk_block_all<0>(first, scratch) : drk_warp_all<0>(first);
  drk_stat second = first;
  if (kStatPasses == 2) {
    const drk_stat between = drk_between(first, n);
    second = drk_row_pass<1>(in, n, part, parts, vectorised, between);
    second = kBlock ? drk_block_all<1>(second, scratch) : drk_warp_all<1>(second);
  }
  return drk_result(first, second, n);
}
)";
}

}  // namespace drk::schedule::detail
