// CUDA GEMM kernels of FP8 tasks (matmul@float8_e4m3fn, gemm_add_relu@float8_e5m2, ...):
// y[M,N] = epilogue((a * a_scale)[M,K] * op(b * b_scale) + bias * bias_scale), a, b and bias FP8
// bytes each followed by its float32 scale, y bfloat16.
//
// The products run on tensor cores through `mma.sync m16n8k32` with FP8 operands (.e4m3 or .e5m2)
// into float32 accumulators: sm_89 (Ada) runs it natively; Hopper has no FP8 mma.sync and ptxas
// lowers each to two float16 HMMAs (so an H200 reaches about a fifth of cuBLASLt's FP8 rate, whose
// kernels use warp-group MMA). The two scales multiply each accumulator once, then the bias
// (decoded and scaled) and the epilogue stages, then one rounding to bfloat16.
//
// The mma takes b with k contiguous: a kn task's b [K,N] is transposed into the workspace first
// (64 x 64 byte tiles), zero-padded to K a multiple of 16; an nk task's b [N,K] and a [M,K] are
// used in place when K is a multiple of 16 and their rows 16-byte aligned, else copied padded the
// same way. Both operands are then staged the same way: `staging` single keeps 2 shared-memory
// stages, double 4, filled by cp.async 16-byte copies (zero-filled outside the matrices) while
// earlier stages are multiplied; fragments are read with ldmatrix from rows padded to 80 bytes.
// `block_tile` 128 is a 128 x 128 tile of y a block (8 warps of 64 x 32), 64 (and 32, raised to
// the smallest FP8 tile) 64 x 64 (4 warps of 32 x 32); the k step is 64. `epilogue` fused applies
// scales, bias and stages at the store; separate writes the scaled product to a float32 workspace
// and a kernel of its own finishes it. thread_tile, k_tile and math do not change an FP8 kernel
// (its products are always the tensor cores'); use_library does not apply (the library's GEMM is
// float32's).
#include <algorithm>

#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

constexpr const char* kFloat8Pieces = R"(
__device__ __forceinline__ void drk_cp_async_16(uint32_t destination, const void* source, bool valid) {
  // A source size of 0 copies nothing and zero-fills the 16 bytes.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void drk_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void drk_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Four 8-row x 16-byte blocks: lane l receives bytes 4 (l % 4) .. + 3 of row l / 4 of block j in
// register j, the m16n8k32 operand layout of four consecutive k.
__device__ __forceinline__ void drk_ldmatrix_x4(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3, uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(address)
               : "memory");
}

__device__ __forceinline__ void drk_mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.@FORMAT@.@FORMAT@.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

[[maybe_unused]] __device__ __forceinline__ float drk_dequantise(uint8_t byte, float scale) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(byte, @INTERPRETATION@))) * scale;
}

__device__ __forceinline__ float drk_finish(float v, int64_t column, const uint8_t* bias, const float* bias_scale) {
  if (kBias) v += drk_dequantise(bias[column], *bias_scale);
  return drk_epilogue(v);
}

// rows_out[j][i] = rows_in[i][j] for i < k, 0 for k <= i < kp: b [k][n] into [n][kp], 64 x 64 bytes a block.
__global__ void drk_transpose_pad(const uint8_t* __restrict__ b, uint8_t* __restrict__ bt, int k, int n, int kp) {
  __shared__ uint8_t tile[64][65];
  const int k0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    const int r = i / 64, c = i % 64;
    tile[r][c] = k0 + r < k && n0 + c < n ? b[static_cast<int64_t>(k0 + r) * n + n0 + c] : uint8_t{0};
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) {
    const int r = i / 16, w = i % 16;  // row n0 + r of bt, bytes k0 + 4 w .. + 3
    if (n0 + r < n && k0 + 4 * w < kp) {
      const uint32_t word = tile[4 * w][r] | tile[4 * w + 1][r] << 8 | tile[4 * w + 2][r] << 16 |
                            static_cast<uint32_t>(tile[4 * w + 3][r]) << 24;
      *reinterpret_cast<uint32_t*>(bt + static_cast<int64_t>(n0 + r) * kp + k0 + 4 * w) = word;
    }
  }
}

// padded[i][j] = rows[i][j] for j < k, 0 for k <= j < kp: rows whose K or alignment the staging cannot take.
__global__ void drk_pad_rows(const uint8_t* __restrict__ rows, uint8_t* __restrict__ padded, int count, int k, int kp) {
  const int64_t words = static_cast<int64_t>(count) * (kp / 4);
  for (int64_t w = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = w / (kp / 4);
    const int column = static_cast<int>(w % (kp / 4)) * 4;
    uint32_t word = 0;
    for (int j = 0; j < 4; ++j)
      if (column + j < k) word |= static_cast<uint32_t>(rows[row * k + column + j]) << (8 * j);
    reinterpret_cast<uint32_t*>(padded)[w] = word;
  }
}

// a [m][kp] and bt [n][kp], 16-byte aligned rows, zero past the true K; y [m][n] bfloat16, or the
// scaled product into `product` [m][n] float32 when the finish runs apart.
__global__ void __launch_bounds__(kThreads, 2)
    drk_gemm_fp8(const uint8_t* __restrict__ a, const uint8_t* __restrict__ bt, const float* __restrict__ a_scale,
                 const float* __restrict__ b_scale, const uint8_t* __restrict__ bias, const float* __restrict__ bias_scale,
                 __nv_bfloat16* __restrict__ y, float* __restrict__ product, int m, int n, int kp) {
  extern __shared__ __align__(128) uint8_t drk_shared[];
  const uint32_t shared_base = static_cast<uint32_t>(__cvta_generic_to_shared(drk_shared));
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const int m0 = blockIdx.y * kBlock, n0 = blockIdx.x * kBlock;

  // Staging: kBlock rows x 4 chunks of 16 bytes per operand; this thread copies chunk c of rows
  // r, r + kThreads / 4, ...
  const int copy_row = tid / 4, copy_chunk = tid % 4;
  const uint8_t* a_source[kCopies];
  const uint8_t* b_source[kCopies];
  bool a_inside[kCopies], b_inside[kCopies];
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    const int row = copy_row + (kThreads / 4) * i;
    a_inside[i] = m0 + row < m;
    b_inside[i] = n0 + row < n;
    a_source[i] = a + (a_inside[i] ? static_cast<int64_t>(m0 + row) * kp + 16 * copy_chunk : 0);
    b_source[i] = bt + (b_inside[i] ? static_cast<int64_t>(n0 + row) * kp + 16 * copy_chunk : 0);
  }
  const uint32_t copy_destination = copy_row * kRowBytes + 16 * copy_chunk;
  auto load_stage = [&](int stage, int k0) {
    const uint32_t base = shared_base + stage * kStageBytes + copy_destination;
    const bool k_inside = k0 + 16 * copy_chunk < kp;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const bool a_valid = a_inside[i] && k_inside, b_valid = b_inside[i] && k_inside;
      drk_cp_async_16(base + (kThreads / 4) * i * kRowBytes, a_valid ? a_source[i] + k0 : a, a_valid);
      drk_cp_async_16(base + kTileBytes + (kThreads / 4) * i * kRowBytes, b_valid ? b_source[i] + k0 : bt, b_valid);
    }
  };

  // ldmatrix rows. a, per 16-row block: lanes 0-7 rows 0-7 at k 0-15, 8-15 rows 8-15 at k 0-15,
  // 16-23 rows 0-7 at k 16-31, 24-31 rows 8-15 at k 16-31. b, per pair of 8-column blocks: lanes
  // 0-7 block 0 at k 0-15, 8-15 block 0 at k 16-31, 16-31 the same for block 1.
  const uint32_t a_fragment = (warp_m * kWarpRows + lane % 16) * kRowBytes + (lane / 16) * 16;
  const uint32_t b_fragment = kTileBytes + (warp_n * 32 + (lane / 16) * 8 + lane % 8) * kRowBytes + (lane / 8 % 2) * 16;

  float acc[kFragmentRows][4][4] = {};
  const int k_tiles = (kp + kBlockK - 1) / kBlockK;
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s * kBlockK);
    drk_cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    drk_cp_async_wait<kStages - 2>();  // this thread's copies of tile kt are done
    __syncthreads();                   // everyone's are, and tile kt - 1's stage is free
    if (kt + kStages - 1 < k_tiles) load_stage((kt + kStages - 1) % kStages, (kt + kStages - 1) * kBlockK);
    drk_cp_async_commit();
    const uint32_t stage = shared_base + (kt % kStages) * kStageBytes;
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += 32) {
      uint32_t af[kFragmentRows][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < kFragmentRows; ++mi)
        drk_ldmatrix_x4(af[mi][0], af[mi][1], af[mi][2], af[mi][3], stage + a_fragment + mi * 16 * kRowBytes + kk);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj)
        drk_ldmatrix_x4(bf[2 * nj][0], bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1],
                        stage + b_fragment + nj * 16 * kRowBytes + kk);
#pragma unroll
      for (int mi = 0; mi < kFragmentRows; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) drk_mma(acc[mi][ni], af[mi], bf[ni]);
    }
  }

  // Accumulators c0, c1: row g, columns 2t, 2t + 1; c2, c3: row g + 8 (g = lane / 4, t = lane % 4).
  const float scale = *a_scale * *b_scale;
#pragma unroll
  for (int mi = 0; mi < kFragmentRows; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + warp_m * kWarpRows + mi * 16 + h * 8 + lane / 4;
      if (row >= m) continue;
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const int column = n0 + warp_n * 32 + ni * 8 + 2 * (lane % 4);
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (column + e >= n) continue;
          const float v = acc[mi][ni][2 * h + e] * scale;
          const int64_t at = static_cast<int64_t>(row) * n + column + e;
          if (kFusedFinish) y[at] = __float2bfloat16_rn(drk_finish(v, column + e, bias, bias_scale));
          else product[at] = v;
        }
      }
    }
}

// The separate finish: bias and stages over the scaled product, one rounding to bfloat16.
[[maybe_unused]] __global__ void drk_finish_all(const float* __restrict__ product, const uint8_t* __restrict__ bias,
                                                const float* __restrict__ bias_scale, __nv_bfloat16* __restrict__ y,
                                                int64_t n, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16_rn(drk_finish(product[i], i % n, bias, bias_scale));
}
)";

constexpr const char* kFloat8Entry = R"(  const drk_tensor& a_tensor = inputs[0];
  const drk_tensor& a_scale = inputs[1];
  const drk_tensor& b_tensor = inputs[2];
  const drk_tensor& b_scale = inputs[3];
  drk_tensor& y_tensor = outputs[0];
  if (!drk_is_dense_f8(a_tensor) || !drk_is_dense_f8(b_tensor) || !drk_is_scale(a_scale) || !drk_is_scale(b_scale) ||
      !drk_is_dense_bf16(y_tensor) || a_tensor.ndim != 2 || b_tensor.ndim != 2 || y_tensor.ndim != 2) {
    return DRK_E_BAD_ARGUMENT;
  }
  const int64_t M = a_tensor.shape[0], K = a_tensor.shape[1];
  const int64_t N = kTransposed ? b_tensor.shape[0] : b_tensor.shape[1];
  if ((kTransposed ? b_tensor.shape[1] : b_tensor.shape[0]) != K || y_tensor.shape[0] != M || y_tensor.shape[1] != N)
    return DRK_E_UNSUPPORTED_SHAPE;
  const uint8_t* bias = nullptr;
  const float* bias_scale = nullptr;
  if (kBias) {
    if (!drk_is_dense_f8(inputs[4]) || !drk_is_scale(inputs[5])) return DRK_E_BAD_ARGUMENT;
    if (inputs[4].ndim != 1 || drk_element_count(inputs[4]) != N) return DRK_E_UNSUPPORTED_SHAPE;
    bias = static_cast<const uint8_t*>(inputs[4].data);
    bias_scale = static_cast<const float*>(inputs[5].data);
  }
  if (M > 65535LL * kBlock || N > 2147483647LL - kBlock || K > 2147483647LL - kPad) return DRK_E_UNSUPPORTED_SHAPE;
  if (M == 0 || N == 0) return DRK_OK;
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int kp = (k + kPad - 1) / kPad * kPad;
  const uint8_t* a = static_cast<const uint8_t*>(a_tensor.data);
  const uint8_t* b = static_cast<const uint8_t*>(b_tensor.data);

  // The workspace: b transposed or padded, a padded, the scaled product; each 256-byte aligned.
  auto rounded = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  const bool pad_a = k % kPad != 0 || !drk_aligned(a, 16);
  const bool copy_b = !kTransposed || k % kPad != 0 || !drk_aligned(b, 16);
  const size_t b_bytes = copy_b ? rounded(static_cast<size_t>(n) * kp) : 0;
  const size_t a_bytes = pad_a ? rounded(static_cast<size_t>(m) * kp) : 0;
  const size_t product_bytes = kFusedFinish ? 0 : rounded(sizeof(float) * static_cast<size_t>(m) * n);
  uint8_t* scratch = nullptr;
  if (b_bytes + a_bytes + product_bytes > 0) {
    if (ctx->workspace == nullptr) return DRK_E_WORKSPACE;
    scratch = static_cast<uint8_t*>(ctx->workspace(ctx, b_bytes + a_bytes + product_bytes));
    if (scratch == nullptr) return DRK_E_WORKSPACE;
  }
  auto pad = [&](const uint8_t* rows, uint8_t* padded, int count) {
    const int64_t words = static_cast<int64_t>(count) * (kp / 4);
    drk_pad_rows<<<drk_grid(std::min<int64_t>((words + 255) / 256, 132 * 16)), 256, 0, stream>>>(rows, padded, count, k, kp);
  };
  const uint8_t* bt = b;
  if (copy_b) {
    uint8_t* into = scratch;
    if (kTransposed) pad(b, into, n);
    else drk_transpose_pad<<<dim3((n + 63) / 64, (kp + 63) / 64), 256, 0, stream>>>(b, into, k, n, kp);
    bt = into;
  }
  if (pad_a) {
    uint8_t* into = scratch + b_bytes;
    pad(a, into, m);
    a = into;
  }
  float* product = kFusedFinish ? nullptr : reinterpret_cast<float*>(scratch + b_bytes + a_bytes);
  if (cudaFuncSetAttribute(drk_gemm_fp8, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes) != cudaSuccess)
    return DRK_E_INTERNAL;
  const dim3 grid((n + kBlock - 1) / kBlock, (m + kBlock - 1) / kBlock);
  drk_gemm_fp8<<<grid, kThreads, kSharedBytes, stream>>>(a, bt, static_cast<const float*>(a_scale.data),
                                                         static_cast<const float*>(b_scale.data), bias, bias_scale,
                                                         static_cast<__nv_bfloat16*>(y_tensor.data), product, m, n, kp);
  if (!kFusedFinish) {
    const int64_t count = M * N;
    drk_finish_all<<<drk_grid(std::min<int64_t>((count + 255) / 256, 132 * 32)), 256, 0, stream>>>(
        product, bias, bias_scale, static_cast<__nv_bfloat16*>(y_tensor.data), N, count);
  }
  return drk_launch_status();
}
)";

}  // namespace

Result<std::string> render_cuda_gemm_float8(const Problem& problem, const Choice& choice) {
  auto params = gemm_params(problem);
  if (!params) return params.error();
  const bool e4m3 = problem.precision == Precision::float8_e4m3fn;
  const int block = std::max(64, numeric_value(choice, cuda_gemm_knob::block_tile));
  const bool fused = choice.value(cuda_gemm_knob::epilogue) == "fused";
  std::string source = cuda_kernel_preamble(problem, choice);
  source += "\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <cuda_fp8.h>\n\n#include <algorithm>\n";
  source += "\nnamespace {\n";
  source += dense_check("drk_is_dense_bf16", "DRK_BF16") + float8_checks(problem.precision);
  source += substitute(R"(
constexpr int kBlock = @BLOCK@;
constexpr int kWarpsN = kBlock / 32;                 // warps across a tile: 32 columns each
constexpr int kWarpRows = kBlock / 2;                // two warps down a tile
constexpr int kThreads = 32 * 2 * kWarpsN;
constexpr int kFragmentRows = kWarpRows / 16;        // 16-row mma blocks a warp
constexpr int kBlockK = 64;
constexpr int kStages = @STAGES@;
constexpr int kRowBytes = kBlockK + 16;              // 80: eight consecutive rows in eight bank groups
constexpr int kTileBytes = kBlock * kRowBytes;
constexpr int kStageBytes = 2 * kTileBytes;          // the a tile, then the b tile
constexpr int kSharedBytes = kStages * kStageBytes;
constexpr int kCopies = kBlock / (kThreads / 4);     // 16-byte chunks a thread copies per operand and stage
constexpr int kPad = 16;                             // K padded to a multiple of this in every staged operand
constexpr bool kTransposed = @TRANSPOSED@;
constexpr bool kBias = @BIAS@;
constexpr bool kFusedFinish = @FUSED@;
static_assert(kCopies * (kThreads / 4) == kBlock, "whole copies");
)",
                       {{"BLOCK", std::to_string(block)},
                        {"STAGES", choice.value(cuda_gemm_knob::staging) == "double" ? "4" : "2"},
                        {"TRANSPOSED", params->b_transposed ? "true" : "false"},
                        {"BIAS", params->has_bias ? "true" : "false"},
                        {"FUSED", fused ? "true" : "false"}});
  source += cuda_stage_function("drk_epilogue", params->epilogue);
  source += substitute(kFloat8Pieces,
                       {{"FORMAT", e4m3 ? "e4m3" : "e5m2"}, {"INTERPRETATION", e4m3 ? "__NV_E4M3" : "__NV_E5M2"}});
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(params->has_bias ? 6 : 4);
  source += kFloat8Entry;
  return source;
}

}  // namespace drk::schedule::detail
