// CUDA reduction kernels: sum, mean or max of x over one dimension (`dim`; `keepdim` only shapes
// y), x viewed as [outer, reduce, inner] and y as [outer, inner].
//
// `strategy`, when inner > 1 (reads along the reduced dim are strided):
// thread_per_output gives each thread one output element (with vector_width 4, four neighbouring
// ones), neighbouring threads on neighbouring inner positions, so that loads coalesce; the thread
// walks the whole reduced dim. warp_per_output gives each warp a tile of 32 neighbouring inner
// positions: its lanes form 4 slices of 8 lanes, a slice reads the tile's 128-byte row segment of
// every 4th row, and the slices merge through shuffles. block_per_output gives each block such a
// tile, split into threads / 8 slices, merged through shuffles within each warp and then the
// warps' totals through shared memory, in warp order. When inner == 1 (contiguous rows): a
// thread, a warp or a block per output, the row split between the warp's lanes or the block's
// threads (shuffles, then the warps' totals through shared memory, in warp order).
// `vector_width` 4 reads float4 where inner % 4 == 0 (rows: reduce % 4 == 0) and x is 16-byte
// aligned, scalars otherwise. `unroll` 4 keeps four independent accumulators along the reduced
// dim (four loads in flight). `threads` is the block size.
//
// Accuracy: a thread adds at most kChunk of its rows into each plain float accumulator before
// folding it into a compensated running total (Neumaier), and partial totals merge with their
// compensations in a fixed order: a sum over 4096 rows stays within a few ulps of the exact one
// whatever the strategy (a plain float chain of 4096 strays ~1e-4 from it, the task's
// tolerance), and is the same bit for bit on every call. max is exact in any order; a NaN
// propagates, as in torch.max.
//
// float16 and bfloat16 (cuda_element_access): elements are widened to float as they are read
// (vector_width 4 reads 8 bytes), accumulate in float as above, and each output is rounded once.
#include <optional>

#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

const char* kAccumulation = R"(
// A running total: the float sum and the compensation of its rounding errors (Neumaier); for
// max, the running maximum (c stays 0).
struct drk_total {
  float s;
  float c;
};

__device__ __forceinline__ drk_total drk_fold(drk_total t, float v) {
  if (!kIsSum) return {drk_combine(t.s, v), 0.0f};
  const float s = t.s + v;
  const float error = fabsf(t.s) >= fabsf(v) ? (t.s - s) + v : (v - s) + t.s;
  return {s, t.c + error};
}

// a, then b with its compensation.
__device__ __forceinline__ drk_total drk_join(drk_total a, drk_total b) {
  a = drk_fold(a, b.s);
  a.c += b.c;
  return a;
}

// An infinite or NaN sum has no meaningful compensation.
__device__ __forceinline__ float drk_value(drk_total t) { return kIsSum && isfinite(t.s) ? t.s + t.c : t.s; }

[[maybe_unused]] __device__ __forceinline__ drk_total drk_shuffle_xor(drk_total t, int mask) {
  return {__shfl_xor_sync(0xffffffffu, t.s, mask), __shfl_xor_sync(0xffffffffu, t.c, mask)};
}

// N consecutive elements at p as floats (one vector when N == 4: p is aligned to four elements).
template <int N>
struct drk_contiguous {
  __device__ __forceinline__ void operator()(const drk_element* p, float (&v)[N]) const {
    if constexpr (N == 4) {
      const float4 q = drk_load4(p, 0);
      v[0] = q.x;
      v[1] = q.y;
      v[2] = q.z;
      v[3] = q.w;
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) v[i] = drk_widen(p[i]);
    }
  }
};

// A tile's 32 inner positions split between 8 lanes: lane q reads columns 4q..4q+3 of the row
// segment at p (one vector, W == 4) or q, q + 8, q + 16, q + 24 (W == 1); kIdentity past `width`
// (a multiple of 4 when W == 4).
template <int W>
struct drk_tile_columns {
  int q;
  int64_t width;
  __device__ __forceinline__ int64_t column(int i) const { return W == 4 ? 4 * q + i : q + 8 * i; }
  __device__ __forceinline__ void operator()(const drk_element* p, float (&v)[4]) const {
    if constexpr (W == 4) {
      if (4 * q < width) {
        drk_contiguous<4>{}(p + 4 * q, v);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = kIdentity;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = column(i) < width ? drk_widen(p[column(i)]) : kIdentity;
    }
  }
};

// Folds items first, first + step, ... < count (N values each, read by `load` at base + item *
// pitch) into the N totals: kUnroll independent sets of accumulators, each folded into the
// totals after kChunk rounds, in accumulator order.
template <int N, typename Load>
__device__ __forceinline__ void drk_accumulate(const drk_element* base, int64_t pitch, int64_t first, int64_t step,
                                               int64_t count, const Load& load, drk_total (&total)[N]) {
  int64_t item = first;
  const drk_element* p = base + first * pitch;
  const int64_t stride = step * pitch;
  while (item < count) {
    float acc[kUnroll][N];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < N; ++i) acc[u][i] = kIdentity;
    }
    int rounds = 0;
    for (; rounds < kChunk && item + (kUnroll - 1) * step < count; ++rounds) {
      float v[kUnroll][N];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) load(p + u * stride, v[u]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int i = 0; i < N; ++i) acc[u][i] = drk_combine(acc[u][i], v[u][i]);
      }
      p += kUnroll * stride;
      item += kUnroll * step;
    }
    if (rounds < kChunk) {  // fewer than kUnroll items are left
      for (; item < count; item += step, p += stride) {
        float v[N];
        load(p, v);
#pragma unroll
        for (int i = 0; i < N; ++i) acc[0][i] = drk_combine(acc[0][i], v[i]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < N; ++i) total[i] = drk_fold(total[i], acc[u][i]);
    }
  }
}

// The total of the contiguous row `in` of n elements split between `parts` threads: part p
// reads vectors p, p + parts, ... (vectorised) and then the elements past them, or elements
// p, p + parts, ...
__device__ __forceinline__ drk_total drk_row_total(const drk_element* in, int64_t n, int part, int parts, bool vectorised) {
  drk_total total[1] = {{kIdentity, 0.0f}};
  int64_t start = 0;
  if (kWidth == 4 && vectorised) {
    drk_total lanes[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) lanes[i] = {kIdentity, 0.0f};
    drk_accumulate<4>(in, 4, part, parts, n / 4, drk_contiguous<4>{}, lanes);
#pragma unroll
    for (int i = 0; i < 4; ++i) total[0] = drk_join(total[0], lanes[i]);
    start = n / 4 * 4;
  }
  drk_accumulate<1>(in + start, 1, part, parts, n - start, drk_contiguous<1>{}, total);
  return total[0];
}

// Lane 0 gets the merge of its warp's totals (a fixed tree).
[[maybe_unused]] __device__ __forceinline__ drk_total drk_warp_total(drk_total t) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) t = drk_join(t, drk_shuffle_xor(t, mask));
  return t;
}

// Lanes 0..7 get the merge of the warp's 4 slices (lanes q, q + 8, q + 16, q + 24).
[[maybe_unused]] __device__ __forceinline__ void drk_merge_slices(drk_total (&total)[4]) {
#pragma unroll
  for (int mask = 8; mask <= 16; mask *= 2) {
#pragma unroll
    for (int i = 0; i < 4; ++i) total[i] = drk_join(total[i], drk_shuffle_xor(total[i], mask));
  }
}

// Writes the tile's outputs of lane q (its 4 columns) at y_tile.
template <int W>
__device__ __forceinline__ void drk_write_tile(drk_element* y_tile, const drk_tile_columns<W>& load, const drk_total (&total)[4],
                                               int64_t reduce) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (load.column(i) < load.width) y_tile[load.column(i)] = drk_narrow(drk_finish(drk_value(total[i]), reduce));
  }
}
)";

const char* kThreadKernels = R"(
__global__ void __launch_bounds__(kThreads) drk_reduce_rows(const drk_element* x, drk_element* y, int64_t outer, int64_t reduce,
                                                            bool vectorised) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; row < outer; row += stride) {
    y[row] = drk_narrow(drk_finish(drk_value(drk_row_total(x + row * reduce, reduce, 0, 1, vectorised)), reduce));
  }
}

// A thread per W neighbouring outputs (W == 4 only when inner % 4 == 0).
template <int W>
__global__ void __launch_bounds__(kThreads) drk_reduce_columns(const drk_element* x, drk_element* y, int64_t outer, int64_t reduce,
                                                               int64_t inner) {
  const int64_t groups = inner / W;
  const int64_t items = outer * groups;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; item < items; item += stride) {
    const int64_t o = item / groups;
    const int64_t j = (item % groups) * W;
    drk_total total[W];
#pragma unroll
    for (int i = 0; i < W; ++i) total[i] = {kIdentity, 0.0f};
    drk_accumulate<W>(x + o * reduce * inner + j, inner, 0, 1, reduce, drk_contiguous<W>{}, total);
#pragma unroll
    for (int i = 0; i < W; ++i) y[o * inner + j + i] = drk_narrow(drk_finish(drk_value(total[i]), reduce));
  }
}

int64_t drk_rows_grid(int64_t outer) { return (outer + kThreads - 1) / kThreads; }
int64_t drk_columns_grid(int64_t outer, int64_t inner, int width) {
  return (outer * (inner / width) + kThreads - 1) / kThreads;
}
)";

const char* kWarpKernels = R"(
__global__ void __launch_bounds__(kThreads) drk_reduce_rows(const drk_element* x, drk_element* y, int64_t outer, int64_t reduce,
                                                            bool vectorised) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < outer; row += warps) {
    const drk_total total = drk_warp_total(drk_row_total(x + row * reduce, reduce, lane, 32, vectorised));
    if (lane == 0) y[row] = drk_narrow(drk_finish(drk_value(total), reduce));
  }
}

// A warp per tile of 32 inner positions: 4 slices of 8 lanes, slice s reading rows s, s + 4, ...
template <int W>
__global__ void __launch_bounds__(kThreads) drk_reduce_columns(const drk_element* x, drk_element* y, int64_t outer, int64_t reduce,
                                                               int64_t inner) {
  const int lane = threadIdx.x % 32;
  const int64_t tiles_per_outer = (inner + 31) / 32;
  const int64_t tiles = outer * tiles_per_outer;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t tile = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; tile < tiles; tile += warps) {
    const int64_t o = tile / tiles_per_outer;
    const int64_t j0 = (tile % tiles_per_outer) * 32;
    const drk_tile_columns<W> load{lane % 8, inner - j0 < 32 ? inner - j0 : 32};
    drk_total total[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) total[i] = {kIdentity, 0.0f};
    drk_accumulate<4>(x + o * reduce * inner + j0, inner, lane / 8, 4, reduce, load, total);
    drk_merge_slices(total);
    if (lane < 8) drk_write_tile(y + o * inner + j0, load, total, reduce);
  }
}

int64_t drk_rows_grid(int64_t outer) { return (outer + kWarps - 1) / kWarps; }
int64_t drk_columns_grid(int64_t outer, int64_t inner, int) { return (outer * ((inner + 31) / 32) + kWarps - 1) / kWarps; }
)";

const char* kBlockKernels = R"(
__global__ void __launch_bounds__(kThreads) drk_reduce_rows(const drk_element* x, drk_element* y, int64_t outer, int64_t reduce,
                                                            bool vectorised) {
  __shared__ drk_total partial[kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    drk_total total = drk_warp_total(drk_row_total(x + row * reduce, reduce, threadIdx.x, kThreads, vectorised));
    if (lane == 0) partial[warp] = total;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int other = 1; other < kWarps; ++other) total = drk_join(total, partial[other]);
      y[row] = drk_narrow(drk_finish(drk_value(total), reduce));
    }
    __syncthreads();
  }
}

// A block per tile of 32 inner positions: kThreads / 8 slices of 8 lanes, slice s reading rows
// s, s + kThreads / 8, ...; each warp's 4 slices merge first, then the warps in order.
template <int W>
__global__ void __launch_bounds__(kThreads) drk_reduce_columns(const drk_element* x, drk_element* y, int64_t outer, int64_t reduce,
                                                               int64_t inner) {
  __shared__ drk_total partial[kWarps][8][4];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int64_t tiles_per_outer = (inner + 31) / 32;
  const int64_t tiles = outer * tiles_per_outer;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t o = tile / tiles_per_outer;
    const int64_t j0 = (tile % tiles_per_outer) * 32;
    const drk_tile_columns<W> load{lane % 8, inner - j0 < 32 ? inner - j0 : 32};
    drk_total total[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) total[i] = {kIdentity, 0.0f};
    drk_accumulate<4>(x + o * reduce * inner + j0, inner, threadIdx.x / 8, kThreads / 8, reduce, load, total);
    drk_merge_slices(total);
    if (lane < 8) {
#pragma unroll
      for (int i = 0; i < 4; ++i) partial[warp][lane][i] = total[i];
    }
    __syncthreads();
    if (threadIdx.x < 8) {
      for (int other = 1; other < kWarps; ++other) {
#pragma unroll
        for (int i = 0; i < 4; ++i) total[i] = drk_join(total[i], partial[other][lane][i]);
      }
      drk_write_tile(y + o * inner + j0, load, total, reduce);
    }
    __syncthreads();
  }
}

int64_t drk_rows_grid(int64_t outer) { return outer; }
int64_t drk_columns_grid(int64_t outer, int64_t inner, int) { return outer * ((inner + 31) / 32); }
)";

}  // namespace

Result<std::string> render_cuda_reduction(const Problem& problem, const Choice& choice) {
  auto params = reduce_params(problem);
  if (!params) return params.error();
  const bool is_max = params->op == "max";
  const std::string& strategy = choice.value(cuda_reduction_knob::strategy);

  const std::optional<CudaSixteenBit> names = problem.precision == Precision::float32
                                                  ? std::nullopt
                                                  : std::optional(cuda_sixteen_bit(problem.precision));
  const std::string dense = names ? names->dense : "drk_is_dense_f32";

  std::string source = cuda_kernel_preamble(problem, choice);
  if (names) source += names->include;
  source += substitute(R"(
namespace {

constexpr int kThreads = @THREADS@;
[[maybe_unused]] constexpr int kWarps = kThreads / 32;
constexpr int kWidth = @W@;
constexpr int kUnroll = @UNROLL@;
// Rounds of kUnroll rows a thread adds into plain float accumulators before folding them.
constexpr int kChunk = 16;
constexpr bool kIsSum = @IS_SUM@;
constexpr float kIdentity = @IDENTITY@;

__device__ __forceinline__ float drk_combine(float acc, float v) { return @COMBINE@; }
__device__ __forceinline__ float drk_finish(float total, int64_t reduce) {
  (void)reduce;
  return @FINISH@;
}
)",
                       {{"THREADS", choice.value(cuda_reduction_knob::threads)},
                        {"W", choice.value(cuda_reduction_knob::vector_width)},
                        {"UNROLL", choice.value(cuda_reduction_knob::unroll)},
                        {"IS_SUM", is_max ? "false" : "true"},
                        {"IDENTITY", is_max ? "-INFINITY" : "0.0f"},
                        {"COMBINE", is_max ? "v > acc || v != v ? v : acc" : "acc + v"},
                        {"FINISH", params->op == "mean" ? "total / static_cast<float>(reduce)" : "total"}});
  source += cuda_element_access(names);
  if (names) source += dense_check(names->dense, names->dtype);
  source += kAccumulation;
  source += strategy == "thread_per_output" ? kThreadKernels
            : strategy == "warp_per_output" ? kWarpKernels
                                            : kBlockKernels;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(1);
  source += reduce_split_dims(*params, dense);
  source += R"(  const drk_element* src = static_cast<const drk_element*>(x.data);
  drk_element* dst = static_cast<drk_element*>(y.data);
  // A vector is 4 elements: 16 bytes of float, 8 of a 16-bit type.
  constexpr int64_t kVectorBytes = 4 * sizeof(drk_element);
  if (inner == 1) {
    const bool vectorised = kWidth == 4 && reduce % 4 == 0 && drk_aligned(src, kVectorBytes);
    drk_reduce_rows<<<drk_grid(drk_rows_grid(outer)), kThreads, 0, stream>>>(src, dst, outer, reduce, vectorised);
  } else if (kWidth == 4 && inner % 4 == 0 && drk_aligned(src, kVectorBytes)) {
    drk_reduce_columns<4><<<drk_grid(drk_columns_grid(outer, inner, 4)), kThreads, 0, stream>>>(src, dst, outer, reduce,
                                                                                                inner);
  } else {
    drk_reduce_columns<1><<<drk_grid(drk_columns_grid(outer, inner, 1)), kThreads, 0, stream>>>(src, dst, outer, reduce,
                                                                                                inner);
  }
  return drk_launch_status();
}
)";
  return source;
}

}  // namespace drk::schedule::detail
