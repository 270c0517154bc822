// CUDA scaled dot-product attention: q [..., Lq, E], k [..., Lk, E], v [..., Lk, Ev] (the same
// leading dims, their product the heads), y [..., Lq, Ev] = softmax(q k^T / sqrt(E)) v, no mask.
//
// `algorithm`: three_kernels computes the scores q k^T * scale of a group of heads into a
// workspace (ctx->workspace, the ABI's scratch memory; tiles of query_tile x key_tile, E staged
// in shared memory 32 at a time), takes a softmax of each score row in place (a warp per row,
// the rowwise softmax's statistics of render_cuda.cpp), and multiplies the probabilities by v
// (tiles of query_tile x 64 columns, keys staged key_tile at a time). The workspace holds
// Lq * Lk floats per head: all heads at once when the harness grants it, else the largest
// group of heads it grants (halving), processed group after group on the stream;
// DRK_E_WORKSPACE only when not even one head's scores fit. fused_online needs no workspace:
// a block takes query_tile queries of one head and a chunk of threads * 64 / query_tile value
// columns, walks the keys key_tile at a time (the tile's scores through shared memory, E staged
// 32 at a time), keeps each query's running maximum and sum of exponentials (online softmax),
// rescales its accumulator by exp(old max - new max) and adds the tile's probabilities times v.
// The accumulator lives in registers: each thread holds query_tile x (64 / query_tile) of it, so
// any Ev works (Ev beyond the chunk takes more blocks, each recomputing the scores).
// `threads` is the block size of every kernel.
//
// Every sum runs in a fixed order in float32 (no atomics); the scale is 1 / sqrtf(E).
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

const char* kTileProduct = R"(
// The thread's share of a TM x TN tile (rows i0.., columns n0..) of A[M][K] * op(B), A with row
// pitch lda, B [N][K] (kBRows, like k) or [K][N] (like v) with row pitch ldb; K is staged TK at a
// time in shared memory, zeros past the edges. Thread t owns column t % TN of the rows
// t / TN + r * (kThreads / TN).
template <int TM, int TN, int TK, bool kBRows>
__device__ void drk_tile_product(const float* a, int64_t lda, int64_t m, const float* b, int64_t ldb, int64_t n,
                                 int64_t k, int64_t i0, int64_t n0, float (&acc)[TM * TN / kThreads],
                                 float (*as)[TK + 1], float (*bs)[TN + 1]) {
  static_assert(kThreads % TN == 0 && (TM * TN) % kThreads == 0, "the tile must split evenly between the threads");
  constexpr int kRows = TM * TN / kThreads;
  constexpr int kRowStep = kThreads / TN;
  const int column = threadIdx.x % TN;
  const int row = threadIdx.x / TN;
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += TK) {
    for (int index = threadIdx.x; index < TM * TK; index += kThreads) {
      const int i = index / TK;
      const int kk = index % TK;
      as[i][kk] = i0 + i < m && k0 + kk < k ? a[(i0 + i) * lda + k0 + kk] : 0.0f;
    }
    for (int index = threadIdx.x; index < TN * TK; index += kThreads) {
      const int nn = kBRows ? index / TK : index % TN;
      const int kk = kBRows ? index % TK : index / TN;
      const bool inside = n0 + nn < n && k0 + kk < k;
      bs[kk][nn] = !inside ? 0.0f : kBRows ? b[(n0 + nn) * ldb + k0 + kk] : b[(k0 + kk) * ldb + n0 + nn];
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < TK; ++kk) {
      const float bv = bs[kk][column];
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = fmaf(as[row + r * kRowStep][kk], bv, acc[r]);
    }
    __syncthreads();
  }
}
)";

const char* kThreeKernels = R"(
constexpr int kValueTile = 64;

// Scores s[h][i][j] = scale * q[h][i] . k[h][j] of `heads` heads, a block per query_tile x
// key_tile tile.
__global__ void __launch_bounds__(kThreads) drk_scores(const float* q, const float* k, float* s, int64_t heads,
                                                       int64_t lq, int64_t lk, int64_t depth, float scale) {
  __shared__ float as[kQueryTile][kDepthTile + 1];
  __shared__ float bs[kDepthTile][kKeyTile + 1];
  const int64_t query_tiles = (lq + kQueryTile - 1) / kQueryTile;
  const int64_t key_tiles = (lk + kKeyTile - 1) / kKeyTile;
  const int64_t tiles = heads * query_tiles * key_tiles;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t h = tile / (query_tiles * key_tiles);
    const int64_t i0 = tile / key_tiles % query_tiles * kQueryTile;
    const int64_t j0 = tile % key_tiles * kKeyTile;
    float acc[kQueryTile * kKeyTile / kThreads];
    drk_tile_product<kQueryTile, kKeyTile, kDepthTile, true>(q + h * lq * depth, depth, lq, k + h * lk * depth, depth,
                                                             lk, depth, i0, j0, acc, as, bs);
    const int64_t j = j0 + threadIdx.x % kKeyTile;
#pragma unroll
    for (int r = 0; r < kQueryTile * kKeyTile / kThreads; ++r) {
      const int64_t i = i0 + threadIdx.x / kKeyTile + r * (kThreads / kKeyTile);
      if (i < lq && j < lk) s[(h * lq + i) * lk + j] = acc[r] * scale;
    }
  }
}

// The softmax of each of the `rows` rows of s (lk each) in place, a warp per row.
__global__ void __launch_bounds__(kThreads) drk_softmax_rows(float* s, int64_t rows, int64_t lk, bool vectorised) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < rows; row += warps) {
    float* p = s + row * lk;
    const drk_stat r = drk_row_result<false>(p, lk, lane, 32, vectorised, nullptr);
    for (int64_t j = lane; j < lk; j += 32) p[j] = expf(p[j] - r.m) / r.s;
  }
}

// y[h] = p[h] v[h] of `heads` heads, a block per query_tile x kValueTile tile of y.
__global__ void __launch_bounds__(kThreads) drk_weighted_values(const float* p, const float* v, float* y, int64_t heads,
                                                                int64_t lq, int64_t lk, int64_t dv) {
  __shared__ float as[kQueryTile][kKeyTile + 1];
  __shared__ float bs[kKeyTile][kValueTile + 1];
  const int64_t query_tiles = (lq + kQueryTile - 1) / kQueryTile;
  const int64_t column_tiles = (dv + kValueTile - 1) / kValueTile;
  const int64_t tiles = heads * query_tiles * column_tiles;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t h = tile / (query_tiles * column_tiles);
    const int64_t i0 = tile / column_tiles % query_tiles * kQueryTile;
    const int64_t c0 = tile % column_tiles * kValueTile;
    float acc[kQueryTile * kValueTile / kThreads];
    drk_tile_product<kQueryTile, kValueTile, kKeyTile, false>(p + h * lq * lk, lk, lq, v + h * lk * dv, dv, dv, lk, i0,
                                                              c0, acc, as, bs);
    const int64_t c = c0 + threadIdx.x % kValueTile;
#pragma unroll
    for (int r = 0; r < kQueryTile * kValueTile / kThreads; ++r) {
      const int64_t i = i0 + threadIdx.x / kValueTile + r * (kThreads / kValueTile);
      if (i < lq && c < dv) y[(h * lq + i) * dv + c] = acc[r];
    }
  }
}
)";

const char* kThreeKernelsLaunch = R"(
  if (ctx->workspace == nullptr) return DRK_E_WORKSPACE;
  // The scores of `group` heads at a time: all of them when the workspace allows it.
  const int64_t head_scores = lq * lk;
  int64_t group = heads;
  float* scores = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(group * head_scores) * sizeof(float)));
  while (scores == nullptr && group > 1) {
    group = (group + 1) / 2;
    scores = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(group * head_scores) * sizeof(float)));
  }
  if (scores == nullptr) return DRK_E_WORKSPACE;
  const bool vectorised = lk % 4 == 0;  // the workspace is 256-byte aligned
  const int64_t query_tiles = (lq + kQueryTile - 1) / kQueryTile;
  const int64_t key_tiles = (lk + kKeyTile - 1) / kKeyTile;
  const int64_t column_tiles = (dv + kValueTile - 1) / kValueTile;
  for (int64_t h0 = 0; h0 < heads; h0 += group) {
    const int64_t count = heads - h0 < group ? heads - h0 : group;
    drk_scores<<<drk_grid(count * query_tiles * key_tiles), kThreads, 0, stream>>>(
        qp + h0 * lq * depth, kp + h0 * lk * depth, scores, count, lq, lk, depth, scale);
    drk_softmax_rows<<<drk_grid((count * lq + kWarps - 1) / kWarps), kThreads, 0, stream>>>(scores, count * lq, lk,
                                                                                          vectorised);
    drk_weighted_values<<<drk_grid(count * query_tiles * column_tiles), kThreads, 0, stream>>>(
        scores, vp + h0 * lk * dv, yp + h0 * lq * dv, count, lq, lk, dv);
  }
  return drk_launch_status();
}
)";

const char* kFusedKernel = R"(
// Value columns per thread and per block: the accumulator is kQueryTile x kColumnsPerThread.
constexpr int kColumnsPerThread = 64 / kQueryTile;
constexpr int kColumns = kThreads * kColumnsPerThread;

// The warp's maximum and sum of v (a fixed tree).
__device__ __forceinline__ float drk_warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ __forceinline__ float drk_warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// A block per (head, query tile, chunk of kColumns value columns).
__global__ void __launch_bounds__(kThreads) drk_attention(const float* q, const float* k, const float* v, float* y,
                                                          int64_t heads, int64_t lq, int64_t lk, int64_t depth,
                                                          int64_t dv, float scale) {
  __shared__ float as[kQueryTile][kDepthTile + 1];
  __shared__ float bs[kDepthTile][kKeyTile + 1];
  __shared__ float p[kQueryTile][kKeyTile + 1];
  __shared__ float row_max[kQueryTile];
  __shared__ float row_sum[kQueryTile];
  __shared__ float row_rescale[kQueryTile];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int64_t query_tiles = (lq + kQueryTile - 1) / kQueryTile;
  const int64_t column_chunks = (dv + kColumns - 1) / kColumns;
  const int64_t items = heads * query_tiles * column_chunks;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t h = item / (query_tiles * column_chunks);
    const int64_t i0 = item / column_chunks % query_tiles * kQueryTile;
    const int64_t c0 = item % column_chunks * kColumns;
    const float* vh = v + h * lk * dv;
    float out[kQueryTile][kColumnsPerThread];
#pragma unroll
    for (int i = 0; i < kQueryTile; ++i) {
#pragma unroll
      for (int c = 0; c < kColumnsPerThread; ++c) out[i][c] = 0.0f;
    }
    if (threadIdx.x < kQueryTile) {
      row_max[threadIdx.x] = -INFINITY;
      row_sum[threadIdx.x] = 0.0f;
    }
    for (int64_t j0 = 0; j0 < lk; j0 += kKeyTile) {
      float acc[kQueryTile * kKeyTile / kThreads];
      drk_tile_product<kQueryTile, kKeyTile, kDepthTile, true>(q + h * lq * depth, depth, lq, k + h * lk * depth, depth,
                                                               lk, depth, i0, j0, acc, as, bs);
#pragma unroll
      for (int r = 0; r < kQueryTile * kKeyTile / kThreads; ++r) {
        p[threadIdx.x / kKeyTile + r * (kThreads / kKeyTile)][threadIdx.x % kKeyTile] = acc[r] * scale;
      }
      __syncthreads();
      // The tile's probabilities under each query's new maximum; a warp per query.
      const int keys = lk - j0 < kKeyTile ? static_cast<int>(lk - j0) : kKeyTile;
      for (int i = warp; i < kQueryTile; i += kWarps) {
        float tile_max = -INFINITY;
        for (int j = lane; j < keys; j += 32) tile_max = fmaxf(tile_max, p[i][j]);
        const float old_max = row_max[i];
        const float new_max = fmaxf(old_max, drk_warp_max(tile_max));
        float sum = 0.0f;
        for (int j = lane; j < keys; j += 32) {
          const float e = expf(p[i][j] - new_max);
          p[i][j] = e;
          sum += e;
        }
        sum = drk_warp_sum(sum);
        if (lane == 0) {
          const float rescale = expf(old_max - new_max);  // 0 on the first tile (old_max = -inf)
          row_rescale[i] = rescale;
          row_sum[i] = row_sum[i] * rescale + sum;
          row_max[i] = new_max;
        }
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kQueryTile; ++i) {
#pragma unroll
        for (int c = 0; c < kColumnsPerThread; ++c) out[i][c] *= row_rescale[i];
      }
      for (int j = 0; j < keys; ++j) {
        float value[kColumnsPerThread];
#pragma unroll
        for (int c = 0; c < kColumnsPerThread; ++c) {
          const int64_t column = c0 + threadIdx.x + c * kThreads;
          value[c] = column < dv ? vh[(j0 + j) * dv + column] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kQueryTile; ++i) {
          const float weight = p[i][j];
#pragma unroll
          for (int c = 0; c < kColumnsPerThread; ++c) out[i][c] = fmaf(weight, value[c], out[i][c]);
        }
      }
      __syncthreads();  // p and row_rescale are rewritten by the next key tile
    }
#pragma unroll
    for (int i = 0; i < kQueryTile; ++i) {
      if (i0 + i >= lq) continue;
#pragma unroll
      for (int c = 0; c < kColumnsPerThread; ++c) {
        const int64_t column = c0 + threadIdx.x + c * kThreads;
        if (column < dv) y[(h * lq + i0 + i) * dv + column] = out[i][c] / row_sum[i];
      }
    }
    __syncthreads();  // row_max and row_sum are reset by the next item
  }
}
)";

const char* kFusedLaunch = R"(
  const int64_t query_tiles = (lq + kQueryTile - 1) / kQueryTile;
  const int64_t column_chunks = (dv + kColumns - 1) / kColumns;
  drk_attention<<<drk_grid(heads * query_tiles * column_chunks), kThreads, 0, stream>>>(qp, kp, vp, yp, heads, lq, lk,
                                                                                      depth, dv, scale);
  return drk_launch_status();
}
)";

}  // namespace

Result<std::string> render_cuda_attention(const Problem& problem, const Choice& choice) {
  const bool fused = choice.value(cuda_attention_knob::algorithm) == "fused_online";

  std::string source = cuda_kernel_preamble(problem, choice);
  source += substitute(R"(
namespace {

constexpr int kThreads = @THREADS@;
constexpr int kWarps = kThreads / 32;
constexpr int kQueryTile = @QUERY_TILE@;
constexpr int kKeyTile = @KEY_TILE@;
// E (the depth of q and k) staged in shared memory this many at a time.
constexpr int kDepthTile = 32;
)",
                       {{"THREADS", choice.value(cuda_attention_knob::threads)},
                        {"QUERY_TILE", choice.value(cuda_attention_knob::query_tile)},
                        {"KEY_TILE", choice.value(cuda_attention_knob::key_tile)}});
  if (!fused) {
    // The row softmax of three_kernels: the rowwise statistics, float4 reads where rows allow.
    source += "constexpr int kWidth = 4;\n";
    source += cuda_stat_protocol();
    source += cuda_softmax_statistics(false);
    source += cuda_stat_reductions();
    source += cuda_element_access(std::nullopt);
    source += cuda_row_statistics();
  }
  source += kTileProduct;
  source += fused ? kFusedKernel : kThreeKernels;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(3);
  source += R"(  const drk_tensor& q = inputs[0];
  const drk_tensor& k = inputs[1];
  const drk_tensor& v = inputs[2];
  drk_tensor& y = outputs[0];
  if (!drk_is_dense_f32(q) || !drk_is_dense_f32(k) || !drk_is_dense_f32(v) || !drk_is_dense_f32(y)) {
    return DRK_E_BAD_ARGUMENT;
  }
  const int rank = q.ndim;
  if (rank < 2 || k.ndim != rank || v.ndim != rank || y.ndim != rank) return DRK_E_UNSUPPORTED_SHAPE;
  int64_t heads = 1;
  for (int dim = 0; dim < rank - 2; ++dim) {
    if (k.shape[dim] != q.shape[dim] || v.shape[dim] != q.shape[dim] || y.shape[dim] != q.shape[dim]) {
      return DRK_E_UNSUPPORTED_SHAPE;
    }
    heads *= q.shape[dim];
  }
  const int64_t lq = q.shape[rank - 2];
  const int64_t depth = q.shape[rank - 1];
  const int64_t lk = k.shape[rank - 2];
  const int64_t dv = v.shape[rank - 1];
  if (k.shape[rank - 1] != depth || v.shape[rank - 2] != lk || y.shape[rank - 2] != lq || y.shape[rank - 1] != dv) {
    return DRK_E_UNSUPPORTED_SHAPE;
  }
  if (heads * lq * dv == 0) return DRK_OK;
  // A softmax over no keys, or scores over no depth, is undefined.
  if (lk == 0 || depth == 0) return DRK_E_UNSUPPORTED_SHAPE;
  const float scale = 1.0f / sqrtf(static_cast<float>(depth));
  const float* qp = static_cast<const float*>(q.data);
  const float* kp = static_cast<const float*>(k.data);
  const float* vp = static_cast<const float*>(v.data);
  float* yp = static_cast<float*>(y.data);
)";
  source += fused ? kFusedLaunch : kThreeKernelsLaunch;
  return source;
}

}  // namespace drk::schedule::detail
