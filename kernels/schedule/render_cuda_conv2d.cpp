// CUDA conv2d kernels: y[N,CO,HO,WO] = epilogue(conv2d(x[N,C,H,W], weight[CO,C,KH,KW]) + bias[CO]),
// NCHW, stride 1, no padding (HO = H - KH + 1, WO = W - KW + 1), float32, every size read from the
// descriptors. The inputs after x, weight and (params.bias) bias are tensors of CO elements that
// the epilogue stages read by the output channel c ("v + add_bias[c]"); they reach the kernels in
// a struct, drk_channel_inputs.
//
// `algorithm` direct: a block covers one image, channel_tile output channels and an output tile
// spatial_tile wide and threads / spatial_tile high; each thread computes one output pixel for
// the channel_tile channels (one input value feeds channel_tile products).
// `algorithm` implicit_gemm: the convolution as a GEMM, M = N * HO * WO output pixels, N = CO, K =
// C * KH * KW, the input patches gathered on the fly. A block computes a 4 spatial_tile (pixels)
// x 4 channel_tile (channels) tile of y, each thread a register tile of pixels strided by the
// thread rows (so that stores coalesce along the output row) and channels strided by the thread
// columns.
// `staging` none: x and weight are read from global memory (through the caches) where they are
// used. shared: direct stages 8 input channels at a time (the input patch of the block's tile and
// its weights) in dynamic shared memory; implicit_gemm stages the gathered a tile and the weight
// tile (16 deep in K, padded by one against bank conflicts) in shared memory, with the pixels'
// input and output offsets worked out once per tile. Elements outside the tensors are staged as
// zeros, and every store is bounds-checked, so any shape is correct.
// `epilogue` fused: bias and stages at the store; separate: a kernel of their own over y.
// `threads`: the block size.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

const char* kShape = R"(
// Sizes of one convolution; HO = H - KH + 1, WO = W - KW + 1.
struct drk_conv_shape {
  int64_t batch, C, H, W, CO, KH, KW, HO, WO;
};

__device__ __forceinline__ float drk_finish(float v, int64_t c, const float* __restrict__ bias,
                                            const drk_channel_inputs& in) {
  if (kBias) v += bias[c];
  return drk_epilogue(v, c@CHANNEL_ARGUMENTS@);
}
)";

const char* kDirectKernel = R"(
constexpr int kChannels = @CHANNELS@;  // output channels per thread
constexpr int kWidth = @WIDTH@;        // output columns per block
constexpr int kRows = kThreads / kWidth;
constexpr int kChannelChunk = 8;  // input channels per shared-memory stage

// The dynamic shared memory of a stage: the input patch [kChannelChunk][kRows + KH - 1][kWidth + KW - 1]
// and the weights [kChannels][kChannelChunk][KH * KW].
int64_t drk_direct_shared_bytes(int64_t KH, int64_t KW) {
  return kStaged ? static_cast<int64_t>(sizeof(float)) *
                       (kChannelChunk * (kRows + KH - 1) * (kWidth + KW - 1) + kChannels * kChannelChunk * KH * KW)
                 : 0;
}

__global__ void __launch_bounds__(kThreads) drk_conv(const float* __restrict__ x, const float* __restrict__ w,
                                                     float* __restrict__ y, const float* __restrict__ bias,
                                                     drk_channel_inputs in, drk_conv_shape s) {
  extern __shared__ float drk_shared[];
  const int tx = threadIdx.x % kWidth;
  const int ty = threadIdx.x / kWidth;
  const int64_t groups = (s.CO + kChannels - 1) / kChannels;
  const int64_t column_tiles = (s.WO + kWidth - 1) / kWidth;
  const int64_t row_tiles = (s.HO + kRows - 1) / kRows;
  const int64_t tiles = s.batch * row_tiles * column_tiles * groups;
  const int64_t plane = s.H * s.W;
  const int64_t taps = s.KH * s.KW;
  // The channel group varies fastest: neighbouring blocks read the same input patch.
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t co0 = (tile % groups) * kChannels;
    const int64_t rest = tile / groups;
    const int64_t ow0 = (rest % column_tiles) * kWidth;
    const int64_t oh0 = ((rest / column_tiles) % row_tiles) * kRows;
    const int64_t n = rest / column_tiles / row_tiles;
    const int64_t oh = oh0 + ty;
    const int64_t ow = ow0 + tx;
    const bool inside = oh < s.HO && ow < s.WO;
    const float* const x_image = x + n * s.C * plane;
    float acc[kChannels];
#pragma unroll
    for (int c = 0; c < kChannels; ++c) acc[c] = 0.0f;
    if (!kStaged) {
      if (inside) {
        for (int64_t ci = 0; ci < s.C; ++ci) {
          const float* const x_at = x_image + ci * plane + oh * s.W + ow;
          const float* const w_at = w + (co0 * s.C + ci) * taps;
          for (int64_t kh = 0; kh < s.KH; ++kh) {
            for (int64_t kw = 0; kw < s.KW; ++kw) {
              const float value = x_at[kh * s.W + kw];
#pragma unroll
              for (int c = 0; c < kChannels; ++c) {
                if (co0 + c < s.CO) acc[c] += value * w_at[c * s.C * taps + kh * s.KW + kw];
              }
            }
          }
        }
      }
    } else {
      const int patch_width = kWidth + static_cast<int>(s.KW) - 1;
      const int patch_plane = (kRows + static_cast<int>(s.KH) - 1) * patch_width;
      const int chunk_taps = kChannelChunk * static_cast<int>(taps);
      float* const patch = drk_shared;
      float* const weights = drk_shared + kChannelChunk * patch_plane;
      for (int64_t c0 = 0; c0 < s.C; c0 += kChannelChunk) {
        for (int index = threadIdx.x; index < kChannelChunk * patch_plane; index += kThreads) {
          const int cc = index / patch_plane;
          const int64_t ih = oh0 + (index % patch_plane) / patch_width;
          const int64_t iw = ow0 + index % patch_width;
          patch[index] =
              c0 + cc < s.C && ih < s.H && iw < s.W ? x_image[(c0 + cc) * plane + ih * s.W + iw] : 0.0f;
        }
        for (int index = threadIdx.x; index < kChannels * chunk_taps; index += kThreads) {
          const int c = index / chunk_taps;
          const int cc = (index % chunk_taps) / static_cast<int>(taps);
          const int tap = index % static_cast<int>(taps);
          weights[index] = co0 + c < s.CO && c0 + cc < s.C ? w[((co0 + c) * s.C + c0 + cc) * taps + tap] : 0.0f;
        }
        __syncthreads();
        if (inside) {
          for (int cc = 0; cc < kChannelChunk; ++cc) {
            const float* const patch_at = patch + cc * patch_plane + ty * patch_width + tx;
            const float* const weights_at = weights + cc * static_cast<int>(taps);
            for (int kh = 0; kh < s.KH; ++kh) {
              for (int kw = 0; kw < s.KW; ++kw) {
                const float value = patch_at[kh * patch_width + kw];
#pragma unroll
                for (int c = 0; c < kChannels; ++c) {
                  acc[c] += value * weights_at[c * chunk_taps + kh * static_cast<int>(s.KW) + kw];
                }
              }
            }
          }
        }
        __syncthreads();
      }
    }
    if (inside) {
#pragma unroll
      for (int c = 0; c < kChannels; ++c) {
        const int64_t co = co0 + c;
        if (co < s.CO) {
          y[((n * s.CO + co) * s.HO + oh) * s.WO + ow] = kFusedFinish ? drk_finish(acc[c], co, bias, in) : acc[c];
        }
      }
    }
  }
}

int drk_launch_conv(const float* x, const float* w, float* y, const float* bias, drk_channel_inputs in,
                    const drk_conv_shape& s, cudaStream_t stream) {
  const int64_t shared_bytes = drk_direct_shared_bytes(s.KH, s.KW);
  if (shared_bytes > 48 * 1024) {
    // The opt-in refuses what the device cannot hold: a filter too large for this staging.
    if (shared_bytes > 2147483647 ||
        cudaFuncSetAttribute(drk_conv, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)) !=
            cudaSuccess) {
      cudaGetLastError();
      return DRK_E_UNSUPPORTED_SHAPE;
    }
  }
  const int64_t tiles = s.batch * ((s.HO + kRows - 1) / kRows) * ((s.WO + kWidth - 1) / kWidth) *
                        ((s.CO + kChannels - 1) / kChannels);
  drk_conv<<<drk_grid(tiles), kThreads, static_cast<size_t>(shared_bytes), stream>>>(x, w, y, bias, in, s);
  return DRK_OK;
}
)";

const char* kImplicitGemmKernel = R"(
constexpr int kBlockM = @BLOCK_M@;  // output pixels per block
constexpr int kBlockN = @BLOCK_N@;  // output channels per block
constexpr int kTileM = @TILE_M@;
constexpr int kTileN = @TILE_N@;
constexpr int kBlockK = 16;
constexpr int kRowThreads = kBlockM / kTileM;
constexpr int kColumnThreads = kBlockN / kTileN;
constexpr int kALoads = kBlockK * kBlockM / kThreads;
constexpr int kBLoads = kBlockK * kBlockN / kThreads;
static_assert(kRowThreads * kColumnThreads == kThreads, "thread grid");
static_assert(kALoads >= 1 && kBLoads >= 1 && kThreads % kBlockK == 0, "whole loads");

// The input offset of output pixel m (image, row, column) and its output offset at channel 0;
// -1 for both past the last pixel.
__device__ __forceinline__ void drk_pixel_offsets(int64_t m, const drk_conv_shape& s, int64_t* x_offset,
                                                  int64_t* y_offset) {
  const int64_t pixels = s.HO * s.WO;
  if (m >= s.batch * pixels) {
    *x_offset = -1;
    *y_offset = -1;
    return;
  }
  const int64_t n = m / pixels;
  const int64_t p = m - n * pixels;
  const int64_t oh = p / s.WO;
  const int64_t ow = p - oh * s.WO;
  *x_offset = (n * s.C * s.H + oh) * s.W + ow;
  *y_offset = n * s.CO * pixels + p;
}

// Thread tile [kTileM][kTileN]: pixels m0 + tr + i * kRowThreads, channels n0 + tc + j * kColumnThreads.
__global__ void __launch_bounds__(kThreads) drk_conv(const float* __restrict__ x, const float* __restrict__ w,
                                                     float* __restrict__ y, const float* __restrict__ bias,
                                                     drk_channel_inputs in, drk_conv_shape s) {
  const int tid = threadIdx.x;
  const int tr = tid % kRowThreads;
  const int tc = tid / kRowThreads;
  const int64_t pixels = s.HO * s.WO;
  const int64_t M = s.batch * pixels;
  const int taps = static_cast<int>(s.KH * s.KW);
  const int K = static_cast<int>(s.C) * taps;
  const int64_t plane = s.H * s.W;
  const int64_t tiles_n = (s.CO + kBlockN - 1) / kBlockN;
  const int64_t tiles = ((M + kBlockM - 1) / kBlockM) * tiles_n;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t m0 = (tile / tiles_n) * kBlockM;
    const int64_t n0 = (tile % tiles_n) * kBlockN;
    float acc[kTileM][kTileN];
#pragma unroll
    for (int i = 0; i < kTileM; ++i) {
#pragma unroll
      for (int j = 0; j < kTileN; ++j) acc[i][j] = 0.0f;
    }
    int64_t y_offsets[kTileM];
    if (kStaged) {
      __shared__ float a_tile[kBlockK][kBlockM + 1];
      __shared__ float b_tile[kBlockK][kBlockN + 1];
      __shared__ int64_t x_rows[kBlockM];
      __shared__ int64_t y_rows[kBlockM];
      for (int row = tid; row < kBlockM; row += kThreads) drk_pixel_offsets(m0 + row, s, &x_rows[row], &y_rows[row]);
      __syncthreads();
      // Each thread gathers one k of the step (tid % kBlockK) for kALoads pixels.
      const int kk = tid % kBlockK;
      for (int k0 = 0; k0 < K; k0 += kBlockK) {
        const int k = k0 + kk;
        int64_t k_offset = -1;
        if (k < K) {
          const int ci = k / taps;
          const int kh = (k - ci * taps) / static_cast<int>(s.KW);
          const int kw = k - ci * taps - kh * static_cast<int>(s.KW);
          k_offset = ci * plane + kh * s.W + kw;
        }
#pragma unroll
        for (int load = 0; load < kALoads; ++load) {
          const int row = tid / kBlockK + load * (kThreads / kBlockK);
          const int64_t x_row = x_rows[row];
          a_tile[kk][row] = k_offset >= 0 && x_row >= 0 ? x[x_row + k_offset] : 0.0f;
        }
#pragma unroll
        for (int load = 0; load < kBLoads; ++load) {
          const int column = tid / kBlockK + load * (kThreads / kBlockK);
          const int64_t co = n0 + column;
          b_tile[kk][column] = k < K && co < s.CO ? w[co * K + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int step = 0; step < kBlockK; ++step) {
          float a_fragment[kTileM];
          float b_fragment[kTileN];
#pragma unroll
          for (int i = 0; i < kTileM; ++i) a_fragment[i] = a_tile[step][tr + i * kRowThreads];
#pragma unroll
          for (int j = 0; j < kTileN; ++j) b_fragment[j] = b_tile[step][tc + j * kColumnThreads];
#pragma unroll
          for (int i = 0; i < kTileM; ++i) {
#pragma unroll
            for (int j = 0; j < kTileN; ++j) acc[i][j] += a_fragment[i] * b_fragment[j];
          }
        }
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < kTileM; ++i) y_offsets[i] = y_rows[tr + i * kRowThreads];
      __syncthreads();  // the next tile rewrites the pixel offsets
    } else {
      int64_t x_offsets[kTileM];
#pragma unroll
      for (int i = 0; i < kTileM; ++i) drk_pixel_offsets(m0 + tr + i * kRowThreads, s, &x_offsets[i], &y_offsets[i]);
      for (int64_t ci = 0; ci < s.C; ++ci) {
        for (int64_t kh = 0; kh < s.KH; ++kh) {
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const int64_t k_offset = ci * plane + kh * s.W + kw;
            const int64_t k = (ci * s.KH + kh) * s.KW + kw;
            float a_fragment[kTileM];
            float b_fragment[kTileN];
#pragma unroll
            for (int i = 0; i < kTileM; ++i) a_fragment[i] = x_offsets[i] >= 0 ? x[x_offsets[i] + k_offset] : 0.0f;
#pragma unroll
            for (int j = 0; j < kTileN; ++j) {
              const int64_t co = n0 + tc + j * kColumnThreads;
              b_fragment[j] = co < s.CO ? w[co * K + k] : 0.0f;
            }
#pragma unroll
            for (int i = 0; i < kTileM; ++i) {
#pragma unroll
              for (int j = 0; j < kTileN; ++j) acc[i][j] += a_fragment[i] * b_fragment[j];
            }
          }
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kTileM; ++i) {
#pragma unroll
      for (int j = 0; j < kTileN; ++j) {
        const int64_t co = n0 + tc + j * kColumnThreads;
        if (y_offsets[i] >= 0 && co < s.CO) {
          y[y_offsets[i] + co * pixels] = kFusedFinish ? drk_finish(acc[i][j], co, bias, in) : acc[i][j];
        }
      }
    }
  }
}

int drk_launch_conv(const float* x, const float* w, float* y, const float* bias, drk_channel_inputs in,
                    const drk_conv_shape& s, cudaStream_t stream) {
  const int64_t tiles = ((s.batch * s.HO * s.WO + kBlockM - 1) / kBlockM) * ((s.CO + kBlockN - 1) / kBlockN);
  drk_conv<<<drk_grid(tiles), kThreads, 0, stream>>>(x, w, y, bias, in, s);
  return DRK_OK;
}
)";

const char* kFinishKernel = R"(
__global__ void __launch_bounds__(256) drk_finish_all(float* y, const float* __restrict__ bias,
                                                      drk_channel_inputs in, int64_t channels, int64_t pixels,
                                                      int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    y[index] = drk_finish(y[index], (index / pixels) % channels, bias, in);
  }
}
)";

// After every_tensor_dense().
const char* kEntryPoint = R"(  const drk_tensor& x_tensor = inputs[0];
  const drk_tensor& w_tensor = inputs[1];
  drk_tensor& y_tensor = outputs[0];
  if (x_tensor.ndim != 4 || w_tensor.ndim != 4 || y_tensor.ndim != 4) return DRK_E_UNSUPPORTED_SHAPE;
  drk_conv_shape s;
  s.batch = x_tensor.shape[0];
  s.C = x_tensor.shape[1];
  s.H = x_tensor.shape[2];
  s.W = x_tensor.shape[3];
  s.CO = w_tensor.shape[0];
  s.KH = w_tensor.shape[2];
  s.KW = w_tensor.shape[3];
  if (w_tensor.shape[1] != s.C || s.KH < 1 || s.KW < 1 || s.H < s.KH || s.W < s.KW ||
      s.C * s.KH * s.KW > 2147483647) {
    return DRK_E_UNSUPPORTED_SHAPE;
  }
  s.HO = s.H - s.KH + 1;
  s.WO = s.W - s.KW + 1;
  if (y_tensor.shape[0] != s.batch || y_tensor.shape[1] != s.CO || y_tensor.shape[2] != s.HO ||
      y_tensor.shape[3] != s.WO) {
    return DRK_E_UNSUPPORTED_SHAPE;
  }
  // bias (when the task has one) and the epilogue's tensors: one value per output channel.
  for (int32_t index = 2; index < num_inputs; ++index) {
    if (drk_element_count(inputs[index]) != s.CO) return DRK_E_UNSUPPORTED_SHAPE;
  }
  [[maybe_unused]] const float* bias = @BIAS@ ? static_cast<const float*>(inputs[2].data) : nullptr;
  const drk_channel_inputs in{@CHANNEL_POINTERS@};
  const int64_t count = drk_element_count(y_tensor);
  if (count == 0) return DRK_OK;
  float* y = static_cast<float*>(y_tensor.data);
  const int launched =
      drk_launch_conv(static_cast<const float*>(x_tensor.data), static_cast<const float*>(w_tensor.data), y, bias,
                      in, s, stream);
  if (launched != DRK_OK) return launched;
)";

// The thread tile of the implicit GEMM: the outputs per thread split into pixels x channels,
// both powers of two, channels <= pixels.
std::pair<int, int> thread_tile(int block_m, int block_n, int threads) {
  const int outputs = block_m * block_n / threads;
  int channels = 1;
  while (channels * channels * 4 <= outputs) channels *= 2;
  return {outputs / channels, channels};
}

}  // namespace

Result<std::string> render_cuda_conv2d(const Problem& problem, const Choice& choice) {
  auto params = gemm_params(problem);
  if (!params) return params.error();
  const size_t operands = params->has_bias ? 3 : 2;
  if (problem.inputs.size() < operands) {
    return make_error(Errc::invalid_argument, "task '" + problem.task + "': a conv2d task with" +
                                                  (params->has_bias ? "" : "out") + " bias has at least " +
                                                  std::to_string(operands) + " inputs (x, weight" +
                                                  (params->has_bias ? ", bias" : "") + ")");
  }
  auto channel_inputs = channel_input_names(problem, operands);
  if (!channel_inputs) return channel_inputs.error();
  const bool has_finish = params->has_bias || !params->epilogue.empty();
  const bool fused = choice.value(cuda_conv2d_knob::epilogue) == "fused";
  const bool direct = choice.value(cuda_conv2d_knob::algorithm) == "direct";
  const int channel_tile = numeric_value(choice, cuda_conv2d_knob::channel_tile);
  const int spatial_tile = numeric_value(choice, cuda_conv2d_knob::spatial_tile);
  const int threads = numeric_value(choice, cuda_conv2d_knob::threads);

  std::string fields;
  std::string parameters = ", int64_t c";
  std::string arguments;
  std::string pointers;
  for (size_t index = 0; index < channel_inputs->size(); ++index) {
    const std::string& name = (*channel_inputs)[index];
    fields += "  const float* " + name + ";\n";
    parameters += ", const float* __restrict__ " + name;
    arguments += ", in." + name;
    pointers += std::string(index == 0 ? "" : ", ") + "static_cast<const float*>(inputs[" +
                std::to_string(operands + index) + "].data)";
  }

  std::string source = cuda_kernel_preamble(problem, choice);
  source += "\nnamespace {\n\n";
  source += substitute(R"(constexpr int kThreads = @THREADS@;
constexpr bool kStaged = @STAGED@;
constexpr bool kBias = @BIAS@;
constexpr bool kFusedFinish = @FUSED_FINISH@;

// The tensors the epilogue reads by output channel.
struct drk_channel_inputs {
@FIELDS@};

)",
                       {{"THREADS", std::to_string(threads)},
                        {"STAGED", choice.value(cuda_conv2d_knob::staging) == "shared" ? "true" : "false"},
                        {"BIAS", params->has_bias ? "true" : "false"},
                        {"FUSED_FINISH", has_finish && fused ? "true" : "false"},
                        {"FIELDS", fields}});
  source += cuda_stage_function("drk_epilogue", params->epilogue, parameters);
  source += substitute(kShape, {{"CHANNEL_ARGUMENTS", arguments}});
  if (direct) {
    source += substitute(kDirectKernel,
                         {{"CHANNELS", std::to_string(channel_tile)}, {"WIDTH", std::to_string(spatial_tile)}});
  } else {
    const int block_m = 4 * spatial_tile;
    const int block_n = 4 * channel_tile;
    const auto [tile_m, tile_n] = thread_tile(block_m, block_n, threads);
    source += substitute(kImplicitGemmKernel, {{"BLOCK_M", std::to_string(block_m)},
                                               {"BLOCK_N", std::to_string(block_n)},
                                               {"TILE_M", std::to_string(tile_m)},
                                               {"TILE_N", std::to_string(tile_n)}});
  }
  const bool own_finish_kernel = has_finish && !fused;
  if (own_finish_kernel) source += kFinishKernel;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(static_cast<int>(problem.inputs.size()));
  source += substitute(every_tensor_dense() + kEntryPoint,
                       {{"BIAS", params->has_bias ? "true" : "false"}, {"CHANNEL_POINTERS", pointers}});
  if (own_finish_kernel) {
    source += R"(  drk_finish_all<<<drk_grid((count + 255) / 256), 256, 0, stream>>>(y, bias, in, s.CO, s.HO * s.WO, count);
)";
  }
  source += "  return drk_launch_status();\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
