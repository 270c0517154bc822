// CUDA GEMM kernels: y[M,N] = epilogue(a[M,K] * op(b) + bias), b [K,N] (kn) or [N,K] (nk), every
// tensor float32, or every tensor float16 or every tensor bfloat16 (products and sums in float32,
// rounded to the 16-bit type at the store, as cuBLAS does for the reference).
//
// `math` simt (the only option for float32 tasks): the classic shared-memory tiled product on
// CUDA cores. A block computes a block_tile x block_tile tile of y, walking k in k_tile steps;
// each step stages the a and b tiles in shared memory as float (a transposed, both padded by one
// column against bank conflicts) and each thread accumulates a thread_tile x thread_tile register
// block (rows and columns strided by the thread grid, so that shared-memory reads and global
// stores coalesce). thread_tile is raised to block_tile / 32 where the block would otherwise
// exceed 1024 threads.
// `math` tensor_core (16-bit tasks only): the same block tiles, staged in shared memory in the
// tasks' 16-bit type (rows padded by 8 elements), multiplied by warps with nvcuda::wmma 16 x 16 x 16
// fragments (float16, or bfloat16 from sm_80) into float accumulators. thread_tile sets the square warp tile (8 x thread_tile,
// kept between block_tile / 4 and block_tile / 2 and at least 16: 4 to 16 warps a block); k_tile
// is raised to 16, the fragments' k. Tiles are loaded 8 halves at a time where K (and N for kn)
// are multiples of 8 and the pointers 16-byte aligned, in pairs of halves otherwise; elements
// outside the matrices are staged as zeros, and each accumulator goes through a per-warp scratch
// to y with bounds checks, so any M, N, K is correct.
// `staging`: single loads a step's tiles, synchronises, computes, synchronises; double keeps
// two shared buffers and fetches the next step's tiles into registers while the current one is
// computed (one synchronisation per step). Shared memory is dynamic, opted in with
// cudaFuncSetAttribute.
// `use_library` (float32 tasks only: the table has gemm_f32 alone): library computes the product
// with ctx->lib->gemm_f32 (cuBLAS through LibTorch, counted by the harness; no TF32) and only
// bias and epilogue are ours; without a bias or epilogue the source then has no kernel of its
// own at all.
// The batched form (cuda_gemm_source with `batched`, the batched_gemm family, simt only, float32 or
// 16-bit): a [B,M,K], b [B,K,N] or [B,N,K], y [B,M,N]; the same product kernel walks the batch
// entries over blockIdx.z (in strides of gridDim.z, at most 65535), the library is called once
// per entry, and the separate epilogue runs once over all of y.
// `epilogue`: fused applies bias and stages at the own kernel's store; separate runs them as
// a kernel of their own over y afterwards (as the library option always does).
#include <algorithm>

#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

// The element type of the tensors and its conversions to and from the float arithmetic.
const char* kFloatValues = R"(
using drk_value = float;
[[maybe_unused]] __device__ __forceinline__ float drk_to_float(float v) { return v; }
[[maybe_unused]] __device__ __forceinline__ float drk_from_float(float v) { return v; }
)";

// A 16-bit element type and its conversions; its elements also travel in pairs (drk_pair) and as
// a zero (drk_zero) in the tensor-core kernel.
std::string sixteen_bit_values(const CudaSixteenBit& names) {
  return substitute(R"(
using drk_value = @T@;
using drk_value2 = @T2@;
[[maybe_unused]] __device__ __forceinline__ float drk_to_float(@T@ v) { return @TO_FLOAT@(v); }
[[maybe_unused]] __device__ __forceinline__ @T@ drk_from_float(float v) { return @FROM_FLOAT@(v); }
[[maybe_unused]] __device__ __forceinline__ @T@ drk_zero() { return @FROM_BITS@(0); }
[[maybe_unused]] __device__ __forceinline__ @T2@ drk_pair(@T@ x, @T@ y) { return @PAIR@(x, y); }
)",
                    {{"T2", names.pair_type},
                     {"T", names.type},
                     {"TO_FLOAT", names.to_float},
                     {"FROM_FLOAT", names.from_float},
                     {"FROM_BITS", names.from_bits},
                     {"PAIR", names.make_pair}});
}

const char* kProductKernel = R"(
// Thread tile [kTile][kTile] at rows ty + i * kRowThreads, columns tx + j * kColumnThreads.
// Matrices [batches][M][K] x [batches][K][N] (or [N][K]) -> [batches][M][N]: blockIdx.z walks the
// batch entries (one for a plain product), blockIdx.x the tiles of each.
__global__ void __launch_bounds__(kThreads) drk_gemm(const drk_value* __restrict__ a_batches,
                                                     const drk_value* __restrict__ b_batches,
                                                     drk_value* __restrict__ y_batches,
                                                     const drk_value* __restrict__ bias, int64_t M, int64_t N,
                                                     int64_t K, int64_t batches) {
  extern __shared__ float drk_shared[];
  float* const a_tiles = drk_shared;                                  // [kStages][kBlockK][kBlock + 1]
  float* const b_tiles = drk_shared + kStages * kBlockK * (kBlock + 1);  // [kStages][kBlockK][kBlock + 1]
  const int tid = threadIdx.x;
  const int tx = tid % kColumnThreads;
  const int ty = tid / kColumnThreads;
  const int64_t tiles_n = (N + kBlock - 1) / kBlock;
  const int64_t tiles = ((M + kBlock - 1) / kBlock) * tiles_n;
  for (int64_t batch = blockIdx.z; batch < batches; batch += gridDim.z) {
    const drk_value* __restrict__ a = a_batches + batch * M * K;
    const drk_value* __restrict__ b = b_batches + batch * K * N;
    drk_value* __restrict__ y = y_batches + batch * M * N;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const int64_t m0 = (tile / tiles_n) * kBlock;
      const int64_t n0 = (tile % tiles_n) * kBlock;
      float acc[kTile][kTile];
#pragma unroll
      for (int i = 0; i < kTile; ++i) {
#pragma unroll
        for (int j = 0; j < kTile; ++j) acc[i][j] = 0.0f;
      }
      // The a and b elements this thread moves for the step at k0 (zero outside the matrices).
      auto fetch = [&](int64_t k0, float* a_values, float* b_values) {
#pragma unroll
        for (int load = 0; load < kLoads; ++load) {
          const int index = tid + load * kThreads;
          float a_value = 0.0f;
          float b_value = 0.0f;
          if (index < kBlock * kBlockK) {
            const int64_t row = m0 + index / kBlockK;
            const int64_t k = k0 + index % kBlockK;
            if (row < M && k < K) a_value = drk_to_float(a[row * K + k]);
            if (kTransposed) {
              const int64_t column = n0 + index / kBlockK;
              if (column < N && k < K) b_value = drk_to_float(b[column * K + k]);
            } else {
              const int64_t kb = k0 + index / kBlock;
              const int64_t column = n0 + index % kBlock;
              if (kb < K && column < N) b_value = drk_to_float(b[kb * N + column]);
            }
          }
          a_values[load] = a_value;
          b_values[load] = b_value;
        }
      };
      auto store = [&](int stage, const float* a_values, const float* b_values) {
        float* a_tile = a_tiles + stage * kBlockK * (kBlock + 1);
        float* b_tile = b_tiles + stage * kBlockK * (kBlock + 1);
#pragma unroll
        for (int load = 0; load < kLoads; ++load) {
          const int index = tid + load * kThreads;
          if (index < kBlock * kBlockK) {
            a_tile[(index % kBlockK) * (kBlock + 1) + index / kBlockK] = a_values[load];
            if (kTransposed) {
              b_tile[(index % kBlockK) * (kBlock + 1) + index / kBlockK] = b_values[load];
            } else {
              b_tile[(index / kBlock) * (kBlock + 1) + index % kBlock] = b_values[load];
            }
          }
        }
      };
      auto compute = [&](int stage) {
        const float* a_tile = a_tiles + stage * kBlockK * (kBlock + 1);
        const float* b_tile = b_tiles + stage * kBlockK * (kBlock + 1);
#pragma unroll
        for (int kk = 0; kk < kBlockK; ++kk) {
          float a_fragment[kTile];
          float b_fragment[kTile];
#pragma unroll
          for (int i = 0; i < kTile; ++i) a_fragment[i] = a_tile[kk * (kBlock + 1) + ty + i * kRowThreads];
#pragma unroll
          for (int j = 0; j < kTile; ++j) b_fragment[j] = b_tile[kk * (kBlock + 1) + tx + j * kColumnThreads];
#pragma unroll
          for (int i = 0; i < kTile; ++i) {
#pragma unroll
            for (int j = 0; j < kTile; ++j) acc[i][j] += a_fragment[i] * b_fragment[j];
          }
        }
      };
      float a_values[kLoads];
      float b_values[kLoads];
      if (kStages == 1) {
        for (int64_t k0 = 0; k0 < K; k0 += kBlockK) {
          fetch(k0, a_values, b_values);
          store(0, a_values, b_values);
          __syncthreads();
          compute(0);
          __syncthreads();
        }
      } else if (K > 0) {
        fetch(0, a_values, b_values);
        store(0, a_values, b_values);
        __syncthreads();
        int stage = 0;
        for (int64_t k0 = 0; k0 < K; k0 += kBlockK) {
          const bool next = k0 + kBlockK < K;
          if (next) fetch(k0 + kBlockK, a_values, b_values);
          compute(stage);
          if (next) store(stage ^ 1, a_values, b_values);
          __syncthreads();
          stage ^= 1;
        }
      }
#pragma unroll
      for (int i = 0; i < kTile; ++i) {
        const int64_t row = m0 + ty + i * kRowThreads;
#pragma unroll
        for (int j = 0; j < kTile; ++j) {
          const int64_t column = n0 + tx + j * kColumnThreads;
          if (row < M && column < N) {
            y[row * N + column] = drk_from_float(kFusedFinish ? drk_finish(acc[i][j], column, bias) : acc[i][j]);
          }
        }
      }
    }
  }
}
)";

const char* kTensorCoreKernel = R"(
// kVector consecutive elements of a row of a dense row-major matrix [rows][columns], zeros outside
// it. With 8, columns and the column are multiples of 8 and the matrix is 16-byte aligned (one
// 16-byte load); with 2, any shape and alignment (two loads, one register).
template <int kVector>
struct DrkChunk;

template <>
struct DrkChunk<8> {
  uint4 bits;
  __device__ __forceinline__ void load(const drk_value* matrix, int64_t rows, int64_t columns, int64_t row,
                                       int64_t column) {
    bits = make_uint4(0u, 0u, 0u, 0u);
    if (row < rows && column < columns) bits = *reinterpret_cast<const uint4*>(matrix + row * columns + column);
  }
  __device__ __forceinline__ void place(drk_value* to) const { *reinterpret_cast<uint4*>(to) = bits; }
};

template <>
struct DrkChunk<2> {
  drk_value2 pair;
  __device__ __forceinline__ void load(const drk_value* matrix, int64_t rows, int64_t columns, int64_t row,
                                       int64_t column) {
    drk_value first = drk_zero();
    drk_value second = drk_zero();
    if (row < rows) {
      const drk_value* at = matrix + row * columns + column;
      if (column < columns) first = at[0];
      if (column + 1 < columns) second = at[1];
    }
    pair = drk_pair(first, second);
  }
  __device__ __forceinline__ void place(drk_value* to) const { *reinterpret_cast<drk_value2*>(to) = pair; }
};

// Warp w accumulates the kWarpTile x kWarpTile tile of y at rows (w / kWarpsPerEdge) * kWarpTile,
// columns (w % kWarpsPerEdge) * kWarpTile of the block's tile, as [kFragments][kFragments]
// 16 x 16 float fragments.
template <int kVector>
__global__ void __launch_bounds__(kThreads) drk_gemm_tensor_cores(const drk_value* __restrict__ a,
                                                                  const drk_value* __restrict__ b, drk_value* __restrict__ y,
                                                                  const drk_value* __restrict__ bias, int64_t M,
                                                                  int64_t N, int64_t K) {
  namespace wmma = nvcuda::wmma;
  constexpr int kAChunksPerRow = kBlockK / kVector;
  constexpr int kBChunksPerRow = kBColumns / kVector;
  constexpr int kALoads = (kBlock * kAChunksPerRow + kThreads - 1) / kThreads;
  constexpr int kBLoads = (kBRows * kBChunksPerRow + kThreads - 1) / kThreads;
  extern __shared__ __align__(128) unsigned char drk_shared[];
  drk_value* const a_tiles = reinterpret_cast<drk_value*>(drk_shared);  // [kStages][kBlock][kAPitch]
  drk_value* const b_tiles = a_tiles + kStages * kATileHalves;       // [kStages][kBRows][kBPitch]
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  // One accumulator fragment of this warp on its way to y.
  float* const scratch = reinterpret_cast<float*>(b_tiles + kStages * kBTileHalves) + warp * 256;
  const int warp_row = (warp / kWarpsPerEdge) * kWarpTile;
  const int warp_column = (warp % kWarpsPerEdge) * kWarpTile;
  const int64_t tiles_n = (N + kBlock - 1) / kBlock;
  const int64_t tiles = ((M + kBlock - 1) / kBlock) * tiles_n;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t m0 = (tile / tiles_n) * kBlock;
    const int64_t n0 = (tile % tiles_n) * kBlock;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragments][kFragments];
#pragma unroll
    for (int i = 0; i < kFragments; ++i) {
#pragma unroll
      for (int j = 0; j < kFragments; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }
    DrkChunk<kVector> a_chunks[kALoads];
    DrkChunk<kVector> b_chunks[kBLoads];
    // The chunks of the a and b tiles this thread moves for the step at k0.
    auto fetch = [&](int64_t k0) {
#pragma unroll
      for (int load = 0; load < kALoads; ++load) {
        const int index = tid + load * kThreads;
        if (index < kBlock * kAChunksPerRow) {
          a_chunks[load].load(a, M, K, m0 + index / kAChunksPerRow, k0 + (index % kAChunksPerRow) * kVector);
        }
      }
#pragma unroll
      for (int load = 0; load < kBLoads; ++load) {
        const int index = tid + load * kThreads;
        if (index < kBRows * kBChunksPerRow) {
          const int row = index / kBChunksPerRow;
          const int column = (index % kBChunksPerRow) * kVector;
          if (kTransposed) {
            b_chunks[load].load(b, N, K, n0 + row, k0 + column);
          } else {
            b_chunks[load].load(b, K, N, k0 + row, n0 + column);
          }
        }
      }
    };
    auto store = [&](int stage) {
      drk_value* a_tile = a_tiles + stage * kATileHalves;
      drk_value* b_tile = b_tiles + stage * kBTileHalves;
#pragma unroll
      for (int load = 0; load < kALoads; ++load) {
        const int index = tid + load * kThreads;
        if (index < kBlock * kAChunksPerRow) {
          a_chunks[load].place(a_tile + (index / kAChunksPerRow) * kAPitch + (index % kAChunksPerRow) * kVector);
        }
      }
#pragma unroll
      for (int load = 0; load < kBLoads; ++load) {
        const int index = tid + load * kThreads;
        if (index < kBRows * kBChunksPerRow) {
          b_chunks[load].place(b_tile + (index / kBChunksPerRow) * kBPitch + (index % kBChunksPerRow) * kVector);
        }
      }
    };
    auto compute = [&](int stage) {
      const drk_value* a_tile = a_tiles + stage * kATileHalves;
      const drk_value* b_tile = b_tiles + stage * kBTileHalves;
#pragma unroll
      for (int kk = 0; kk < kBlockK; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, drk_value, wmma::row_major> a_fragment[kFragments];
#pragma unroll
        for (int i = 0; i < kFragments; ++i) {
          wmma::load_matrix_sync(a_fragment[i], a_tile + (warp_row + i * 16) * kAPitch + kk, kAPitch);
        }
        // One b fragment at a time: fewer registers next to the accumulators.
#pragma unroll
        for (int j = 0; j < kFragments; ++j) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, drk_value, drk_b_layout> b_fragment;
          const drk_value* at = kTransposed ? b_tile + (warp_column + j * 16) * kBPitch + kk
                                         : b_tile + kk * kBPitch + warp_column + j * 16;
          wmma::load_matrix_sync(b_fragment, at, kBPitch);
#pragma unroll
          for (int i = 0; i < kFragments; ++i) wmma::mma_sync(acc[i][j], a_fragment[i], b_fragment, acc[i][j]);
        }
      }
    };
    if (kStages == 1) {
      for (int64_t k0 = 0; k0 < K; k0 += kBlockK) {
        fetch(k0);
        store(0);
        __syncthreads();
        compute(0);
        __syncthreads();
      }
    } else if (K > 0) {
      fetch(0);
      store(0);
      __syncthreads();
      int stage = 0;
      for (int64_t k0 = 0; k0 < K; k0 += kBlockK) {
        const bool next = k0 + kBlockK < K;
        if (next) fetch(k0 + kBlockK);
        compute(stage);
        if (next) store(stage ^ 1);
        __syncthreads();
        stage ^= 1;
      }
    }
    // Each fragment through the warp's scratch: lane l writes elements 8 l .. 8 l + 7 (half a row).
#pragma unroll
    for (int i = 0; i < kFragments; ++i) {
#pragma unroll
      for (int j = 0; j < kFragments; ++j) {
        wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int element = lane * 8 + e;
          const int64_t row = m0 + warp_row + i * 16 + element / 16;
          const int64_t column = n0 + warp_column + j * 16 + element % 16;
          if (row < M && column < N) {
            const float v = scratch[element];
            y[row * N + column] = drk_from_float(kFusedFinish ? drk_finish(v, column, bias) : v);
          }
        }
        __syncwarp();
      }
    }
  }
}

// The kernel for these operands: 8-element loads where every row of a and b starts 16-byte aligned.
template <int kVector>
int drk_launch_tensor_cores(const drk_value* a, const drk_value* b, drk_value* y, const drk_value* bias, int64_t M, int64_t N,
                            int64_t K, cudaStream_t stream) {
  if (cudaFuncSetAttribute(drk_gemm_tensor_cores<kVector>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSharedBytes)) != cudaSuccess) {
    return DRK_E_INTERNAL;
  }
  const int64_t tiles = ((M + kBlock - 1) / kBlock) * ((N + kBlock - 1) / kBlock);
  drk_gemm_tensor_cores<kVector><<<drk_grid(tiles), kThreads, kSharedBytes, stream>>>(a, b, y, bias, M, N, K);
  return DRK_OK;
}
)";

const char* kFinishKernel = R"(
__global__ void __launch_bounds__(256) drk_finish_all(drk_value* y, const drk_value* __restrict__ bias, int64_t N,
                                                      int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    y[index] = drk_from_float(drk_finish(drk_to_float(y[index]), index % N, bias));
  }
}
)";

// The square warp tile of the tensor-core kernel: 8 x thread_tile, kept between block / 4 and
// block / 2 (4 to 16 warps) and at least one 16 x 16 fragment.
int warp_tile(int block, int thread_tile) {
  return std::clamp(8 * thread_tile, std::max(16, block / 4), std::max(16, block / 2));
}


}  // namespace

Result<std::string> cuda_gemm_source(const Problem& problem, const Choice& choice, bool batched) {
  static_assert(cuda_gemm_knob::block_tile == cuda_batched_gemm_knob::block_tile &&
                    cuda_gemm_knob::thread_tile == cuda_batched_gemm_knob::thread_tile &&
                    cuda_gemm_knob::k_tile == cuda_batched_gemm_knob::k_tile &&
                    cuda_gemm_knob::staging == cuda_batched_gemm_knob::staging &&
                    cuda_gemm_knob::use_library == cuda_batched_gemm_knob::use_library &&
                    cuda_gemm_knob::epilogue == cuda_batched_gemm_knob::epilogue,
                "the batched space reads the gemm knobs at the gemm family's positions");
  auto params = gemm_params(problem);
  if (!params) return params.error();
  const bool sixteen_bit = problem.precision != Precision::float32;
  const bool has_finish = params->has_bias || !params->epilogue.empty();
  const bool library = choice.value(cuda_gemm_knob::use_library) == "library";
  const bool tensor_cores = !batched && choice.value(cuda_gemm_knob::math) == "tensor_core";
  const bool fused = choice.value(cuda_gemm_knob::epilogue) == "fused";
  const int block = numeric_value(choice, cuda_gemm_knob::block_tile);
  const int thread_tile = numeric_value(choice, cuda_gemm_knob::thread_tile);
  const int tile = std::max(thread_tile, block / 32);
  const int block_k = numeric_value(choice, cuda_gemm_knob::k_tile);
  const int threads = (block / tile) * (block / tile);
  const bool own_finish_kernel = has_finish && (library || !fused);
  // render() refused the others: the library's gemm_f32 is float32, tensor cores are 16-bit's.
  if ((library && sixteen_bit) || (tensor_cores && !sixteen_bit)) {
    return make_error(Errc::internal, "task '" + problem.task + "': " + choice.describe() + " does not apply to " +
                                          std::string(precision_name(problem.precision)));
  }

  std::string source = cuda_kernel_preamble(problem, choice);
  std::string dense = "drk_is_dense_f32";
  std::string values = kFloatValues;
  if (sixteen_bit) {
    const CudaSixteenBit names = cuda_sixteen_bit(problem.precision);
    source += names.include;
    dense = names.dense;
    values = sixteen_bit_values(names) + dense_check(names.dense, names.dtype);
  }
  if (tensor_cores) source += "#include <mma.h>\n";
  source += "\nnamespace {\n";
  source += values;
  source += "\n";
  // Only kernels call drk_finish: a library product without bias or epilogue has none.
  if (!library || own_finish_kernel) {
    source += cuda_stage_function("drk_epilogue", params->epilogue);
    source += substitute(R"(
constexpr bool kBias = @BIAS@;

__device__ __forceinline__ float drk_finish(float v, int64_t column, const drk_value* bias) {
  if (kBias) v += drk_to_float(bias[column]);
  return drk_epilogue(v);
}
)",
                         {{"BIAS", params->has_bias ? "true" : "false"}});
  }
  if (!library && !tensor_cores) {
    source += substitute(R"(
constexpr int kBlock = @BLOCK@;
constexpr int kTile = @TILE@;
constexpr int kBlockK = @BLOCK_K@;
constexpr int kStages = @STAGES@;
constexpr int kRowThreads = kBlock / kTile;
constexpr int kColumnThreads = kBlock / kTile;
constexpr int kThreads = kRowThreads * kColumnThreads;
constexpr int kLoads = (kBlock * kBlockK + kThreads - 1) / kThreads;
constexpr bool kTransposed = @TRANSPOSED@;
constexpr bool kFusedFinish = @FUSED_FINISH@;
constexpr size_t kSharedBytes = sizeof(float) * kStages * kBlockK * 2 * (kBlock + 1);
static_assert(kThreads == @THREADS@, "thread count");
)",
                         {{"BLOCK", std::to_string(block)},
                          {"TILE", std::to_string(tile)},
                          {"BLOCK_K", std::to_string(block_k)},
                          {"STAGES", choice.value(cuda_gemm_knob::staging) == "double" ? "2" : "1"},
                          {"TRANSPOSED", params->b_transposed ? "true" : "false"},
                          {"FUSED_FINISH", has_finish && fused ? "true" : "false"},
                          {"THREADS", std::to_string(threads)}});
    source += kProductKernel;
  }
  if (tensor_cores) {
    const int warp_edge = warp_tile(block, thread_tile);
    source += substitute(R"(
constexpr int kBlock = @BLOCK@;
constexpr int kWarpTile = @WARP_TILE@;
constexpr int kBlockK = @BLOCK_K@;
constexpr int kStages = @STAGES@;
constexpr bool kTransposed = @TRANSPOSED@;
constexpr bool kFusedFinish = @FUSED_FINISH@;
using drk_b_layout = nvcuda::wmma::@B_LAYOUT@;
constexpr int kWarpsPerEdge = kBlock / kWarpTile;
constexpr int kThreads = 32 * kWarpsPerEdge * kWarpsPerEdge;
constexpr int kFragments = kWarpTile / 16;
// Tiles in shared memory, rows padded by 8 halves: a [kBlock][kAPitch]; b [kBlockK][kBPitch]
// (kn) or [kBlock][kBPitch] (nk), so that fragments load as row_major or col_major b.
constexpr int kAPitch = kBlockK + 8;
constexpr int kBRows = kTransposed ? kBlock : kBlockK;
constexpr int kBColumns = kTransposed ? kBlockK : kBlock;
constexpr int kBPitch = kBColumns + 8;
constexpr int kATileHalves = kBlock * kAPitch;
constexpr int kBTileHalves = kBRows * kBPitch;
constexpr size_t kSharedBytes =
    sizeof(drk_value) * kStages * (kATileHalves + kBTileHalves) + sizeof(float) * 256 * (kThreads / 32);
static_assert(kThreads == @THREADS@, "thread count");
static_assert(kBlockK % 16 == 0 && kWarpTile % 16 == 0 && kBlock % kWarpTile == 0, "whole fragments");
)",
                         {{"BLOCK", std::to_string(block)},
                          {"WARP_TILE", std::to_string(warp_edge)},
                          {"BLOCK_K", std::to_string(std::max(block_k, 16))},
                          {"STAGES", choice.value(cuda_gemm_knob::staging) == "double" ? "2" : "1"},
                          {"TRANSPOSED", params->b_transposed ? "true" : "false"},
                          {"FUSED_FINISH", has_finish && fused ? "true" : "false"},
                          {"B_LAYOUT", params->b_transposed ? "col_major" : "row_major"},
                          {"THREADS", std::to_string(32 * (block / warp_edge) * (block / warp_edge))}});
    source += kTensorCoreKernel;
  }
  if (own_finish_kernel) source += kFinishKernel;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(params->has_bias ? 3 : 2);
  const std::string shapes =
      batched ? batched_gemm_split_shapes(dense) : gemm_split_shapes(dense);
  // The entries of a batch (the plain product's is 1), the elements of y and the grid's batch extent.
  const std::string batches = batched ? "batches" : "1";
  const std::string outputs = batched ? "batches * M * N" : "M * N";
  const std::string grid_batches = batched ? "static_cast<unsigned>(batches < 65535 ? batches : 65535)" : "1";
  source += substitute(shapes + R"(  [[maybe_unused]] const drk_value* bias = nullptr;
  if (@BIAS@) {
    if (drk_element_count(inputs[2]) != N || inputs[2].ndim != 1) return DRK_E_UNSUPPORTED_SHAPE;
    bias = static_cast<const drk_value*>(inputs[2].data);
  }
  if (@OUTPUTS@ == 0) return DRK_OK;
  const drk_value* a = static_cast<const drk_value*>(a_tensor.data);
  const drk_value* b = static_cast<const drk_value*>(b_tensor.data);
  drk_value* y = static_cast<drk_value*>(y_tensor.data);
)",
                       {{"TRANSPOSED", params->b_transposed ? "true" : "false"},
                        {"BIAS", params->has_bias ? "true" : "false"},
                        {"OUTPUTS", outputs}});
  if (library && batched) {
    source += substitute(R"(  if (ctx->lib == nullptr || ctx->lib->gemm_f32 == nullptr) return DRK_E_LIBRARY;
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int status = ctx->lib->gemm_f32(ctx, M, N, K, 1.0f, a + batch * M * K, K, b + batch * K * N, @LDB@,
                                          @TRANSPOSED_INT@, 0.0f, y + batch * M * N, N);
    if (status != DRK_OK) return status;
  }
)",
                         {{"LDB", params->b_transposed ? "K" : "N"},
                          {"TRANSPOSED_INT", params->b_transposed ? "1" : "0"}});
  } else if (library) {
    source += substitute(R"(  if (ctx->lib == nullptr || ctx->lib->gemm_f32 == nullptr) return DRK_E_LIBRARY;
  const int status = ctx->lib->gemm_f32(ctx, M, N, K, 1.0f, a, K, b, @LDB@, @TRANSPOSED_INT@, 0.0f, y, N);
  if (status != DRK_OK) return status;
)",
                         {{"LDB", params->b_transposed ? "K" : "N"},
                          {"TRANSPOSED_INT", params->b_transposed ? "1" : "0"}});
  } else if (tensor_cores) {
    source += R"(  const bool whole_chunks =
      K % 8 == 0 && (kTransposed || N % 8 == 0) && drk_aligned(a, 16) && drk_aligned(b, 16);
  const int launched = whole_chunks ? drk_launch_tensor_cores<8>(a, b, y, bias, M, N, K, stream)
                                    : drk_launch_tensor_cores<2>(a, b, y, bias, M, N, K, stream);
  if (launched != DRK_OK) return launched;
)";
  } else {
    // gridDim.z is at most 65535: the kernel walks larger batches in strides of its grid.
    source += substitute(R"(  if (cudaFuncSetAttribute(drk_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSharedBytes)) != cudaSuccess) {
    return DRK_E_INTERNAL;
  }
  const int64_t tiles = ((M + kBlock - 1) / kBlock) * ((N + kBlock - 1) / kBlock);
  const dim3 grid(drk_grid(tiles), 1, @GRID_BATCHES@);
  drk_gemm<<<grid, kThreads, kSharedBytes, stream>>>(a, b, y, bias, M, N, K, @BATCHES@);
)",
                         {{"GRID_BATCHES", grid_batches}, {"BATCHES", batches}});
  }
  if (own_finish_kernel) {
    source += substitute(R"(  drk_finish_all<<<drk_grid((@OUTPUTS@ + 255) / 256), 256, 0, stream>>>(y, bias, N, @OUTPUTS@);
)",
                         {{"OUTPUTS", outputs}});
  }
  source += "  return drk_launch_status();\n}\n";
  return source;
}

Result<std::string> render_cuda_gemm(const Problem& problem, const Choice& choice) {
  if (is_float8(problem.precision)) return render_cuda_gemm_float8(problem, choice);
  return cuda_gemm_source(problem, choice, false);
}

}  // namespace drk::schedule::detail
