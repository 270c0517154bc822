// CUDA GEMM kernels: y[M,N] = epilogue(a[M,K] * op(b) + bias), b [K,N] (kn) or [N,K] (nk).
//
// The own kernel is the classic shared-memory tiled product: a block computes a
// block_tile x block_tile tile of y, walking k in k_tile steps; each step stages the a and b
// tiles in shared memory (a transposed, both padded by one column against bank conflicts) and
// each thread accumulates a thread_tile x thread_tile register block (rows and columns strided
// by the thread grid, so that shared-memory reads and global stores coalesce). thread_tile is
// raised to block_tile / 32 where the block would otherwise exceed 1024 threads.
// `staging`: single loads a step's tiles, synchronises, computes, synchronises; double keeps
// two shared buffers and fetches the next step's tiles into registers while the current one is
// computed (one synchronisation per step). Shared memory is dynamic (up to 66 KB), opted in
// with cudaFuncSetAttribute.
// `use_library`: library computes the product with ctx->lib->gemm_f32 (cuBLAS through
// LibTorch, counted by the harness; no TF32) and only bias and epilogue are ours; without a
// bias or epilogue the source then has no kernel of its own at all.
// `epilogue`: fused applies bias and stages at the own kernel's store; separate runs them as
// a kernel of their own over y afterwards (as the library option always does).
#include <algorithm>

#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

const char* kProductKernel = R"(
// Thread tile [kTile][kTile] at rows ty + i * kRowThreads, columns tx + j * kColumnThreads.
__global__ void __launch_bounds__(kThreads) drk_gemm(const float* __restrict__ a, const float* __restrict__ b,
                                                     float* __restrict__ y, const float* __restrict__ bias,
                                                     int64_t M, int64_t N, int64_t K) {
  extern __shared__ float drk_shared[];
  float* const a_tiles = drk_shared;                                  // [kStages][kBlockK][kBlock + 1]
  float* const b_tiles = drk_shared + kStages * kBlockK * (kBlock + 1);  // [kStages][kBlockK][kBlock + 1]
  const int tid = threadIdx.x;
  const int tx = tid % kColumnThreads;
  const int ty = tid / kColumnThreads;
  const int64_t tiles_n = (N + kBlock - 1) / kBlock;
  const int64_t tiles = ((M + kBlock - 1) / kBlock) * tiles_n;
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
          if (row < M && k < K) a_value = a[row * K + k];
          if (kTransposed) {
            const int64_t column = n0 + index / kBlockK;
            if (column < N && k < K) b_value = b[column * K + k];
          } else {
            const int64_t kb = k0 + index / kBlock;
            const int64_t column = n0 + index % kBlock;
            if (kb < K && column < N) b_value = b[kb * N + column];
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
        if (row < M && column < N) y[row * N + column] = kFusedFinish ? drk_finish(acc[i][j], column, bias) : acc[i][j];
      }
    }
  }
}
)";

const char* kFinishKernel = R"(
__global__ void __launch_bounds__(256) drk_finish_all(float* y, const float* __restrict__ bias, int64_t N,
                                                      int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    y[index] = drk_finish(y[index], index % N, bias);
  }
}
)";

}  // namespace

Result<std::string> render_cuda_gemm(const Problem& problem, const Choice& choice) {
  auto params = gemm_params(problem);
  if (!params) return params.error();
  const bool has_finish = params->has_bias || !params->epilogue.empty();
  const bool library = choice.value(cuda_gemm_knob::use_library) == "library";
  const bool fused = choice.value(cuda_gemm_knob::epilogue) == "fused";
  const int block = numeric_value(choice, cuda_gemm_knob::block_tile);
  const int tile = std::max(numeric_value(choice, cuda_gemm_knob::thread_tile), block / 32);
  const int block_k = numeric_value(choice, cuda_gemm_knob::k_tile);
  const int threads = (block / tile) * (block / tile);
  const bool own_finish_kernel = has_finish && (library || !fused);

  std::string source = cuda_kernel_preamble(problem, choice);
  source += "\nnamespace {\n\n";
  // Only kernels call drk_finish: a library product without bias or epilogue has none.
  if (!library || own_finish_kernel) {
    source += cuda_stage_function("drk_epilogue", params->epilogue);
    source += substitute(R"(
constexpr bool kBias = @BIAS@;

__device__ __forceinline__ float drk_finish(float v, int64_t column, const float* bias) {
  if (kBias) v += bias[column];
  return drk_epilogue(v);
}
)",
                         {{"BIAS", params->has_bias ? "true" : "false"}});
  }
  if (!library) {
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
  if (own_finish_kernel) source += kFinishKernel;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(params->has_bias ? 3 : 2);
  source += substitute(gemm_split_shapes() + R"(  [[maybe_unused]] const float* bias = nullptr;
  if (@BIAS@) {
    if (drk_element_count(inputs[2]) != N || inputs[2].ndim != 1) return DRK_E_UNSUPPORTED_SHAPE;
    bias = static_cast<const float*>(inputs[2].data);
  }
  if (M * N == 0) return DRK_OK;
  const float* a = static_cast<const float*>(a_tensor.data);
  const float* b = static_cast<const float*>(b_tensor.data);
  float* y = static_cast<float*>(y_tensor.data);
)",
                       {{"TRANSPOSED", params->b_transposed ? "true" : "false"},
                        {"BIAS", params->has_bias ? "true" : "false"}});
  if (library) {
    source += substitute(R"(  if (ctx->lib == nullptr || ctx->lib->gemm_f32 == nullptr) return DRK_E_LIBRARY;
  const int status = ctx->lib->gemm_f32(ctx, M, N, K, 1.0f, a, K, b, @LDB@, @TRANSPOSED_INT@, 0.0f, y, N);
  if (status != DRK_OK) return status;
)",
                         {{"LDB", params->b_transposed ? "K" : "N"},
                          {"TRANSPOSED_INT", params->b_transposed ? "1" : "0"}});
  } else {
    source += R"(  if (cudaFuncSetAttribute(drk_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSharedBytes)) != cudaSuccess) {
    return DRK_E_INTERNAL;
  }
  const int64_t tiles = ((M + kBlock - 1) / kBlock) * ((N + kBlock - 1) / kBlock);
  drk_gemm<<<drk_grid(tiles), kThreads, kSharedBytes, stream>>>(a, b, y, bias, M, N, K);
)";
  }
  if (own_finish_kernel) {
    source += R"(  drk_finish_all<<<drk_grid((M * N + 255) / 256), 256, 0, stream>>>(y, bias, N, M * N);
)";
  }
  source += "  return drk_launch_status();\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
