// Honest FP8 matrix product for matmul@float8_e4m3fn and matmul@float8_e5m2 on CUDA:
// y = (a * a_scale) @ (b * b_scale) in bfloat16, a [M,K] and b [K,N] row-major FP8. The products
// run on the tensor cores through mma.sync m16n8k32 (.e4m3 or .e5m2) with float32
// accumulators; the two scales are applied once to the accumulators, then rounded to nearest-even.
//
// The mma wants B as [N,K] (k contiguous), so a small kernel first transposes b into workspace,
// zero-padding K to a multiple of 16: a byte-granular transpose is cheap next to the product and
// lets the main kernel stream both operands with the same 16-byte copies. `a` is used in place
// when its rows are 16-byte aligned (K % 16 == 0), else it is copied zero-padded the same way.
//
// Main kernel: 128x128 block tile, K step 64, 8 warps each computing 64x32 with 4x4 mmas per
// k32, four-stage cp.async pipeline (zero-filling rows and k chunks out of range), fragments read
// with ldmatrix from rows padded to 80 bytes (conflict-free), bounds-checked bfloat16 stores.
// sm_89 runs the mma natively (QMMA); sm_90 has no FP8 mma.sync, so ptxas unpacks to FP16 and
// issues two HMMA.16816 per mma: FP8 at full Hopper rate would need wgmma.
#include <cuda_bf16.h>

#include "drk_kernel.h"

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;
constexpr int kStages = 4;
constexpr int kThreads = 256;                 // 8 warps: 2 along M (64 rows) x 4 along N (32 columns)
constexpr int kRowBytes = kBlockK + 16;       // 80: eight consecutive rows hit eight distinct 16-byte bank groups
constexpr int kTileBytes = kBlockM * kRowBytes;
constexpr int kStageBytes = 2 * kTileBytes;   // the A tile then the B tile
constexpr int kSmemBytes = kStages * kStageBytes;
constexpr int kPad = 16;                      // K is padded to a multiple of this in every staged operand

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  // src-size 0 copies nothing and zero-fills the 16 bytes.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Four 8x8 b16 matrices = four 8-row x 16-byte FP8 blocks: lane l receives bytes 4*(l%4)..+3 of row l/4
// of block j in register j, which is the m16n8k32 operand layout for four consecutive k.
__device__ __forceinline__ void ldmatrix_x4(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr)
               : "memory");
}

template <bool kE5M2>
__device__ __forceinline__ void mma_fp8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (kE5M2) {
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// bt[j][i] = b[i][j] for i < k, 0 for k <= i < kp (kp a multiple of 16), one 64x64 byte tile a block.
__global__ void transpose_pad_b(const uint8_t* __restrict__ b, uint8_t* __restrict__ bt, int k, int n, int kp) {
  __shared__ uint8_t tile[64][65];
  const int k0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    const int r = i / 64, c = i % 64;
    tile[r][c] = k0 + r < k && n0 + c < n ? b[(int64_t)(k0 + r) * n + n0 + c] : uint8_t{0};
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) {
    const int r = i / 16, w = i % 16;  // row n0 + r of bt, bytes k0 + 4w .. k0 + 4w + 3
    if (n0 + r < n && k0 + 4 * w < kp) {
      const uint32_t word = tile[4 * w][r] | tile[4 * w + 1][r] << 8 | tile[4 * w + 2][r] << 16 |
                            (uint32_t)tile[4 * w + 3][r] << 24;
      *reinterpret_cast<uint32_t*>(bt + (int64_t)(n0 + r) * kp + k0 + 4 * w) = word;
    }
  }
}

// ap[i][j] = a[i][j] for j < k, 0 for k <= j < kp: only when a's rows are not 16-byte aligned.
__global__ void pad_a(const uint8_t* __restrict__ a, uint8_t* __restrict__ ap, int m, int k, int kp) {
  const int64_t words = (int64_t)m * (kp / 4);
  for (int64_t w = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; w < words; w += (int64_t)gridDim.x * blockDim.x) {
    const int64_t row = w / (kp / 4);
    const int col = (int)(w % (kp / 4)) * 4;
    uint32_t word = 0;
    for (int j = 0; j < 4; ++j)
      if (col + j < k) word |= (uint32_t)a[row * k + col + j] << (8 * j);
    reinterpret_cast<uint32_t*>(ap)[w] = word;
  }
}

// a [m][kp] and bt [n][kp]: 16-byte aligned rows, zero past the true K. y [m][n] bfloat16.
template <bool kE5M2>
__global__ void __launch_bounds__(kThreads, 2)
    fp8_gemm(const uint8_t* __restrict__ a, const uint8_t* __restrict__ bt, const float* __restrict__ a_scale,
             const float* __restrict__ b_scale, __nv_bfloat16* __restrict__ y, int m, int n, int kp, bool pairs) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t smem_base = (uint32_t)__cvta_generic_to_shared(smem);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / 4, warp_n = warp % 4;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;

  // Staging: 128 rows x 4 chunks of 16 bytes per operand; this thread copies rows r and r + 64, chunk c.
  const int copy_row = tid / 4, copy_chunk = tid % 4;
  const uint8_t* a_src[2];
  const uint8_t* b_src[2];
  bool a_ok[2], b_ok[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = copy_row + 64 * i;
    a_ok[i] = m0 + row < m;
    b_ok[i] = n0 + row < n;
    a_src[i] = a + (a_ok[i] ? (int64_t)(m0 + row) * kp + 16 * copy_chunk : 0);
    b_src[i] = bt + (b_ok[i] ? (int64_t)(n0 + row) * kp + 16 * copy_chunk : 0);
  }
  const uint32_t copy_dst = copy_row * kRowBytes + 16 * copy_chunk;
  auto load_stage = [&](int stage, int k0) {
    const uint32_t base = smem_base + stage * kStageBytes + copy_dst;
    const bool k_ok = k0 + 16 * copy_chunk < kp;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const bool a_valid = a_ok[i] && k_ok, b_valid = b_ok[i] && k_ok;
      cp_async_16(base + 64 * i * kRowBytes, a_valid ? a_src[i] + k0 : a, a_valid);
      cp_async_16(base + kTileBytes + 64 * i * kRowBytes, b_valid ? b_src[i] + k0 : bt, b_valid);
    }
  };

  // ldmatrix row addresses. A, per 16-row block: lanes 0-7 rows 0-7 / k 0-15 (a0), 8-15 rows 8-15 / k 0-15
  // (a1), 16-23 rows 0-7 / k 16-31 (a2), 24-31 rows 8-15 / k 16-31 (a3). B, per pair of 8-column blocks:
  // lanes 0-7 block 0 / k 0-15 (b0), 8-15 block 0 / k 16-31 (b1), 16-23 and 24-31 the same for block 1.
  const uint32_t a_frag = (warp_m * 64 + lane % 16) * kRowBytes + (lane / 16) * 16;
  const uint32_t b_frag = kTileBytes + (warp_n * 32 + (lane / 16) * 8 + lane % 8) * kRowBytes + (lane / 8 % 2) * 16;

  float acc[4][4][4] = {};
  const int k_tiles = (kp + kBlockK - 1) / kBlockK;
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s * kBlockK);
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt are done
    __syncthreads();               // everyone's are, and tile kt - 1's stage is no longer read
    if (kt + kStages - 1 < k_tiles) load_stage((kt + kStages - 1) % kStages, (kt + kStages - 1) * kBlockK);
    cp_async_commit();
    const uint32_t stage = smem_base + (kt % kStages) * kStageBytes;
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += 32) {
      uint32_t af[4][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
        ldmatrix_x4(af[mi][0], af[mi][1], af[mi][2], af[mi][3], stage + a_frag + mi * 16 * kRowBytes + kk);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj)
        ldmatrix_x4(bf[2 * nj][0], bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1],
                    stage + b_frag + nj * 16 * kRowBytes + kk);
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma_fp8<kE5M2>(acc[mi][ni], af[mi], bf[ni]);
    }
  }

  // Accumulator c0, c1: row g, columns 2t, 2t + 1; c2, c3: row g + 8 (g = lane / 4, t = lane % 4).
  const float scale = *a_scale * *b_scale;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + warp_m * 64 + mi * 16 + h * 8 + lane / 4;
      if (row >= m) continue;
      __nv_bfloat16* y_row = y + (int64_t)row * n;
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const int col = n0 + warp_n * 32 + ni * 8 + 2 * (lane % 4);
        const float v0 = acc[mi][ni][2 * h] * scale, v1 = acc[mi][ni][2 * h + 1] * scale;
        if (pairs) {  // n even and y 4-byte aligned: col even, so col < n implies col + 1 < n
          if (col < n) *reinterpret_cast<__nv_bfloat162*>(y_row + col) = __floats2bfloat162_rn(v0, v1);
        } else {
          if (col < n) y_row[col] = __float2bfloat16_rn(v0);
          if (col + 1 < n) y_row[col + 1] = __float2bfloat16_rn(v1);
        }
      }
    }
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 4 || num_outputs != 1) return DRK_E_BAD_ARGUMENT;
  const drk_tensor &a = inputs[0], &a_scale = inputs[1], &b = inputs[2], &b_scale = inputs[3], &y = outputs[0];
  if ((a.dtype != DRK_F8E4M3 && a.dtype != DRK_F8E5M2) || b.dtype != a.dtype || a_scale.dtype != DRK_F32 ||
      b_scale.dtype != DRK_F32 || y.dtype != DRK_BF16)
    return DRK_E_BAD_ARGUMENT;
  if (a.ndim != 2 || b.ndim != 2 || y.ndim != 2 || b.shape[0] != a.shape[1] || y.shape[0] != a.shape[0] ||
      y.shape[1] != b.shape[1])
    return DRK_E_BAD_ARGUMENT;
  const int64_t m64 = a.shape[0], k64 = a.shape[1], n64 = b.shape[1];
  if (m64 > 65535LL * kBlockM || n64 > INT32_MAX - kBlockN || k64 > 65535LL * 64) return DRK_E_UNSUPPORTED_SHAPE;
  if (m64 == 0 || n64 == 0) return DRK_OK;
  const int m = (int)m64, n = (int)n64, k = (int)k64;
  const int kp = (k + kPad - 1) / kPad * kPad;

  const bool copy_a = k % kPad != 0 || reinterpret_cast<uintptr_t>(a.data) % 16 != 0;
  const size_t bt_bytes = ((size_t)n * kp + 255) / 256 * 256;
  const size_t a_bytes = copy_a ? (size_t)m * kp : 0;
  uint8_t* scratch = nullptr;
  if (bt_bytes + a_bytes > 0 && (scratch = static_cast<uint8_t*>(ctx->workspace(ctx, bt_bytes + a_bytes))) == nullptr)
    return DRK_E_WORKSPACE;
  uint8_t* bt = scratch;
  const uint8_t* a_rows = static_cast<const uint8_t*>(a.data);

  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  if (kp > 0) {
    dim3 grid((n + 63) / 64, (kp + 63) / 64);
    transpose_pad_b<<<grid, 256, 0, stream>>>(static_cast<const uint8_t*>(b.data), bt, k, n, kp);
  }
  if (copy_a) {
    uint8_t* ap = scratch + bt_bytes;
    const int64_t words = (int64_t)m * (kp / 4);
    const int64_t blocks = words / 256 + 1 < 132 * 16 ? words / 256 + 1 : 132 * 16;
    pad_a<<<(unsigned)blocks, 256, 0, stream>>>(a_rows, ap, m, k, kp);
    a_rows = ap;
  }

  const bool pairs = n % 2 == 0 && reinterpret_cast<uintptr_t>(y.data) % 4 == 0;
  dim3 grid((n + kBlockN - 1) / kBlockN, (m + kBlockM - 1) / kBlockM);
  auto launch = [&](auto kernel) {
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    kernel<<<grid, kThreads, kSmemBytes, stream>>>(a_rows, bt, static_cast<const float*>(a_scale.data),
                                                   static_cast<const float*>(b_scale.data),
                                                   static_cast<__nv_bfloat16*>(y.data), m, n, kp, pairs);
  };
  if (a.dtype == DRK_F8E5M2)
    launch(fp8_gemm<true>);
  else
    launch(fp8_gemm<false>);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
