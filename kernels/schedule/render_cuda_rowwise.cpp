// CUDA rowwise kernels: softmax, log_softmax, rms_norm, layer_norm over an inclusive range of
// dims, the tensor viewed as [outer, reduce, inner].
//
// `strategy`, when inner == 1 (contiguous rows): warp_per_row gives each warp a row (shuffle
// reductions, threads / 32 rows per block); block_per_row gives each block a row (warp shuffles,
// then the warps' partials through shared memory). When inner > 1 (strided columns):
// warp_per_row gives each thread a column (neighbouring threads read neighbouring columns, so
// loads coalesce); block_per_row gives each block 32 neighbouring columns whose reduce steps
// are split between its warps and merged through shared memory.
// `passes`: three_pass reads the row once per statistic (max then sum of exponentials; mean
// then squared deviations); online computes them in one read (the online max and rescaled sum
// of the softmax family, Welford for layer_norm) before the write. rms_norm has one statistic.
// `vector_width` 4 reads and writes contiguous rows as float4 when the row length and the
// pointers allow it (scalar otherwise, and always for strided columns).
// float16 and bfloat16 tasks (every floating tensor, layer_norm's weight and bias too): the same
// kernels over 16-bit elements, each widened to float32 on load (4 at a time as one 8-byte access
// where float32 reads a float4), statistics and output computed in float32, and each output
// rounded once to nearest even on the store.
#include <optional>

#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

// drk_identity/drk_add/drk_merge for statistic pass P (0, and 1 for two-statistic passes),
// drk_between (what pass 1 needs of pass 0), drk_result (the final statistic) and drk_out.
std::string op_functions(const std::string& op, bool online) {
  const bool softmax_family = op == "softmax" || op == "log_softmax";
  std::string source = cuda_stat_protocol();
  const std::string pass1 = cuda_single_statistic();
  if (softmax_family) {
    source += cuda_softmax_statistics(online);
  } else if (op == "rms_norm") {
    source += R"(
constexpr int kStatPasses = 1;
template <> __device__ drk_stat drk_identity<0>() { return {0.0f, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<0>(drk_stat acc, float v, const drk_stat&) {
  acc.s += v * v;
  return acc;
}
template <> __device__ drk_stat drk_merge<0>(drk_stat x, drk_stat y) { return {0.0f, x.s + y.s, 0.0f}; }
)" + pass1 + R"(
__device__ drk_stat drk_result(drk_stat first, drk_stat, int64_t n) {
  return {0.0f, sqrtf(first.s / static_cast<float>(n) + kEps), 0.0f};
}
)";
  } else if (online) {  // layer_norm, Welford: m = mean, s = sum of squared deviations, c = count
    source += R"(
constexpr int kStatPasses = 1;
template <> __device__ drk_stat drk_identity<0>() { return {0.0f, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<0>(drk_stat acc, float v, const drk_stat&) {
  acc.c += 1.0f;
  const float delta = v - acc.m;
  acc.m += delta / acc.c;
  acc.s += delta * (v - acc.m);
  return acc;
}
template <> __device__ drk_stat drk_merge<0>(drk_stat x, drk_stat y) {
  if (x.c == 0.0f) return y;
  if (y.c == 0.0f) return x;
  const float c = x.c + y.c;
  const float delta = y.m - x.m;
  return {x.m + delta * (y.c / c), x.s + y.s + delta * delta * (x.c * y.c / c), c};
}
)" + pass1 + R"(
__device__ drk_stat drk_result(drk_stat first, drk_stat, int64_t n) {
  return {first.m, 1.0f / sqrtf(first.s / static_cast<float>(n) + kEps), 0.0f};
}
)";
  } else {  // layer_norm, three passes: sum, squared deviations from the mean, write
    source += R"(
constexpr int kStatPasses = 2;
template <> __device__ drk_stat drk_identity<0>() { return {0.0f, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<0>(drk_stat acc, float v, const drk_stat&) {
  acc.s += v;
  return acc;
}
template <> __device__ drk_stat drk_merge<0>(drk_stat x, drk_stat y) { return {0.0f, x.s + y.s, 0.0f}; }
template <> __device__ drk_stat drk_identity<1>() { return {0.0f, 0.0f, 0.0f}; }
template <> __device__ drk_stat drk_add<1>(drk_stat acc, float v, const drk_stat& between) {
  const float d = v - between.m;
  acc.s += d * d;
  return acc;
}
template <> __device__ drk_stat drk_merge<1>(drk_stat x, drk_stat y) { return {0.0f, x.s + y.s, 0.0f}; }
__device__ drk_stat drk_between(drk_stat first, int64_t n) { return {first.s / static_cast<float>(n), 0.0f, 0.0f}; }
__device__ drk_stat drk_result(drk_stat first, drk_stat second, int64_t n) {
  return {first.s / static_cast<float>(n), 1.0f / sqrtf(second.s / static_cast<float>(n) + kEps), 0.0f};
}
)";
  }
  if (op == "softmax") {
    source += "__device__ __forceinline__ float drk_out(float v, const drk_stat& r, float, float) { return expf(v - r.m) / r.s; }\n";
  } else if (op == "log_softmax") {
    source += "__device__ __forceinline__ float drk_out(float v, const drk_stat& r, float, float) { return v - (r.m + logf(r.s)); }\n";
  } else if (op == "rms_norm") {
    source += "__device__ __forceinline__ float drk_out(float v, const drk_stat& r, float, float) { return v / r.s; }\n";
  } else {
    source += "__device__ __forceinline__ float drk_out(float v, const drk_stat& r, float w, float b) { return (v - r.m) * r.s * w + b; }\n";
  }
  return source;
}

// A contiguous row read by `parts` cooperating threads (a warp or a block).
const char* kRowFunctions = R"(
__device__ __forceinline__ float drk_weight(const drk_element* w, int64_t j) { return kAffine ? drk_widen(w[j]) : 1.0f; }
__device__ __forceinline__ float drk_bias(const drk_element* b, int64_t j) { return kAffine ? drk_widen(b[j]) : 0.0f; }

__device__ void drk_row_write(const drk_element* in, drk_element* out, int64_t n, int part, int parts, bool vectorised,
                              const drk_stat& r, const drk_element* w, const drk_element* b) {
  int64_t start = 0;
  if (kWidth == 4 && vectorised) {
    const int64_t n4 = n / 4;
    for (int64_t i = part; i < n4; i += parts) {
      const float4 v = drk_load4(in, i);
      const int64_t j = 4 * i;
      drk_store4(out, i, make_float4(drk_out(v.x, r, drk_weight(w, j), drk_bias(b, j)),
                                     drk_out(v.y, r, drk_weight(w, j + 1), drk_bias(b, j + 1)),
                                     drk_out(v.z, r, drk_weight(w, j + 2), drk_bias(b, j + 2)),
                                     drk_out(v.w, r, drk_weight(w, j + 3), drk_bias(b, j + 3))));
    }
    start = n4 * 4;
  }
  for (int64_t i = start + part; i < n; i += parts) {
    out[i] = drk_narrow(drk_out(drk_widen(in[i]), r, drk_weight(w, i), drk_bias(b, i)));
  }
}

template <bool kBlock>
__device__ void drk_row(const drk_element* in, drk_element* out, int64_t n, int part, int parts, bool vectorised,
                        const drk_element* w, const drk_element* b, drk_stat* scratch) {
  drk_row_write(in, out, n, part, parts, vectorised, drk_row_result<kBlock>(in, n, part, parts, vectorised, scratch),
                w, b);
}
)";

const char* kWarpKernels = R"(
__global__ void __launch_bounds__(kThreads) drk_rows_warp(const drk_element* x, drk_element* y, int64_t outer,
                                                          int64_t n, const drk_element* w, const drk_element* b,
                                                          bool vectorised) {
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < outer; row += warps) {
    drk_row<false>(x + row * n, y + row * n, n, threadIdx.x % 32, 32, vectorised, w, b, nullptr);
  }
}

__global__ void __launch_bounds__(kThreads) drk_columns_thread(const drk_element* x, drk_element* y, int64_t outer,
                                                               int64_t n, int64_t inner, const drk_element* w,
                                                               const drk_element* b) {
  const int64_t columns = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t column = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; column < columns;
       column += stride) {
    const int64_t o = column / inner;
    const int64_t j = column % inner;
    const drk_element* in = x + o * n * inner + j;
    drk_element* out = y + o * n * inner + j;
    drk_stat first = drk_identity<0>();
    for (int64_t r = 0; r < n; ++r) first = drk_add<0>(first, drk_widen(in[r * inner]), first);
    drk_stat second = first;
    if (kStatPasses == 2) {
      const drk_stat between = drk_between(first, n);
      second = drk_identity<1>();
      for (int64_t r = 0; r < n; ++r) second = drk_add<1>(second, drk_widen(in[r * inner]), between);
    }
    const drk_stat result = drk_result(first, second, n);
    for (int64_t r = 0; r < n; ++r) {
      out[r * inner] = drk_narrow(drk_out(drk_widen(in[r * inner]), result, drk_weight(w, r), drk_bias(b, r)));
    }
  }
}
)";

const char* kBlockKernels = R"(
__global__ void __launch_bounds__(kThreads) drk_rows_block(const drk_element* x, drk_element* y, int64_t outer,
                                                           int64_t n, const drk_element* w, const drk_element* b,
                                                           bool vectorised) {
  __shared__ drk_stat scratch[kWarps + 1];
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    drk_row<true>(x + row * n, y + row * n, n, threadIdx.x, kThreads, vectorised, w, b, scratch);
  }
}

__global__ void __launch_bounds__(kThreads) drk_columns_block(const drk_element* x, drk_element* y, int64_t outer,
                                                              int64_t n, int64_t inner, const drk_element* w,
                                                              const drk_element* b) {
  __shared__ drk_stat partial[kWarps][33];
  const int lane = threadIdx.x % 32;
  const int slice = threadIdx.x / 32;
  const int64_t tiles = (inner + 31) / 32;
  for (int64_t item = blockIdx.x; item < outer * tiles; item += gridDim.x) {
    const int64_t o = item / tiles;
    const int64_t j = (item % tiles) * 32 + lane;
    const bool active = j < inner;
    const drk_element* in = x + o * n * inner + (active ? j : 0);
    drk_element* out = y + o * n * inner + (active ? j : 0);
    drk_stat first = drk_identity<0>();
    if (active) {
      for (int64_t r = slice; r < n; r += kWarps) first = drk_add<0>(first, drk_widen(in[r * inner]), first);
    }
    first = drk_slices_all<0>(first, partial);
    drk_stat second = first;
    if (kStatPasses == 2) {
      const drk_stat between = drk_between(first, n);
      second = drk_identity<1>();
      if (active) {
        for (int64_t r = slice; r < n; r += kWarps) second = drk_add<1>(second, drk_widen(in[r * inner]), between);
      }
      second = drk_slices_all<1>(second, partial);
    }
    const drk_stat result = drk_result(first, second, n);
    if (active) {
      for (int64_t r = slice; r < n; r += kWarps) {
        out[r * inner] = drk_narrow(drk_out(drk_widen(in[r * inner]), result, drk_weight(w, r), drk_bias(b, r)));
      }
    }
  }
}
)";

}  // namespace

Result<std::string> render_cuda_rowwise(const Problem& problem, const Choice& choice) {
  auto params = rowwise_params(problem);
  if (!params) return params.error();
  const bool online = choice.value(cuda_rowwise_knob::passes) == "online";
  const bool block = choice.value(cuda_rowwise_knob::strategy) == "block_per_row";
  const bool affine = params->op == "layer_norm";
  const std::optional<CudaSixteenBit> names = problem.precision == Precision::float32
                                                  ? std::nullopt
                                                  : std::optional(cuda_sixteen_bit(problem.precision));
  const std::string dense = names ? names->dense : "drk_is_dense_f32";

  std::string source = cuda_kernel_preamble(problem, choice);
  if (names) source += names->include;
  source += substitute(R"(
namespace {

[[maybe_unused]] constexpr float kEps = static_cast<float>(@EPS@);
constexpr int kThreads = @THREADS@;
constexpr int kWarps = kThreads / 32;
constexpr int kWidth = @W@;
constexpr bool kAffine = @AFFINE@;
)",
                       {{"EPS", params->eps},
                        {"THREADS", choice.value(cuda_rowwise_knob::threads)},
                        {"W", choice.value(cuda_rowwise_knob::vector_width)},
                        {"AFFINE", affine ? "true" : "false"}});
  // The element access before the templates that call it (cuda_row_statistics).
  source += cuda_element_access(names);
  if (names) source += dense_check(names->dense, names->dtype);
  source += op_functions(params->op, online);
  source += cuda_stat_reductions();
  source += cuda_row_statistics();
  source += kRowFunctions;
  source += block ? kBlockKernels : kWarpKernels;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(affine ? 3 : 1);
  source += substitute(rowwise_split_dims(dense) + R"(  const drk_element* weight = nullptr;
  const drk_element* bias = nullptr;
  if (kAffine) {
    if (!@DENSE@(inputs[1]) || !@DENSE@(inputs[2])) return DRK_E_BAD_ARGUMENT;
    if (drk_element_count(inputs[1]) != reduce || drk_element_count(inputs[2]) != reduce) {
      return DRK_E_UNSUPPORTED_SHAPE;
    }
    weight = static_cast<const drk_element*>(inputs[1].data);
    bias = static_cast<const drk_element*>(inputs[2].data);
  }
  if (outer * reduce * inner == 0) return DRK_OK;
  const drk_element* src = static_cast<const drk_element*>(x.data);
  drk_element* dst = static_cast<drk_element*>(y.data);
  // A vector is 4 elements: 16 bytes of float, 8 of a 16-bit type.
  constexpr int64_t kVectorBytes = 4 * sizeof(drk_element);
)",
                       {{"BEGIN", std::to_string(params->reduce_begin)},
                        {"END", std::to_string(params->reduce_end)},
                        {"DENSE", dense}});
  if (block) {
    source += R"(  if (inner == 1) {
    const bool vectorised = reduce % 4 == 0 && drk_aligned(src, kVectorBytes) && drk_aligned(dst, kVectorBytes);
    drk_rows_block<<<drk_grid(outer), kThreads, 0, stream>>>(src, dst, outer, reduce, weight, bias, vectorised);
  } else {
    drk_columns_block<<<drk_grid(outer * ((inner + 31) / 32)), kThreads, 0, stream>>>(src, dst, outer, reduce,
                                                                                   inner, weight, bias);
  }
  return drk_launch_status();
}
)";
  } else {
    source += R"(  if (inner == 1) {
    const bool vectorised = reduce % 4 == 0 && drk_aligned(src, kVectorBytes) && drk_aligned(dst, kVectorBytes);
    drk_rows_warp<<<drk_grid((outer + kWarps - 1) / kWarps), kThreads, 0, stream>>>(src, dst, outer, reduce, weight,
                                                                                   bias, vectorised);
  } else {
    drk_columns_thread<<<drk_grid((outer * inner + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        src, dst, outer, reduce, inner, weight, bias);
  }
  return drk_launch_status();
}
)";
  }
  return source;
}

}  // namespace drk::schedule::detail
