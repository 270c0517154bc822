// CUDA cross-entropy: predictions [N, C] float32, float16 or bfloat16, targets [N] int64, loss []
// of the predictions' dtype = the mean over rows of logsumexp(row) - row[target]. A 16-bit row is
// widened to float as it is read (cuda_element_access); the statistics, the row losses and their
// mean are float, and the mean is rounded once, as it is stored.
//
// Two kernels on ctx->stream. The first writes each row's loss into a workspace of N floats
// (ctx->workspace, the ABI's scratch memory, valid until drk_kernel returns; DRK_E_WORKSPACE when
// refused); the second, a single block, sums them in a fixed order (a strided sum per thread,
// then a tree in shared memory) and divides by N: deterministic, no float atomics, any N.
//
// `strategy`: warp_per_row gives each warp a row (shuffle reductions, threads / 32 rows per
// block); block_per_row gives each block a row (warp shuffles, then the warps' partials through
// shared memory). `passes`: three_pass reads the row for its maximum, again for the sum of
// exp(v - max), and then reads the target's logit; online computes the maximum and the rescaled
// sum in one read (the rowwise softmax's statistics, render_cuda.cpp). `vector_width` 4 reads four
// elements at once (16 bytes of float, 8 of a 16-bit type) when C % 4 == 0 and the predictions are
// aligned to that. `threads` is the block size of
// both kernels.
//
// A target outside [0, C) is not checked on the host (the targets live on the device); the row's
// loss becomes NaN instead of an out-of-bounds read, so the loss is NaN.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {
namespace {

const char* kRowLoss = R"(
__device__ __forceinline__ float drk_row_loss(const drk_element* in, int64_t classes, int64_t target,
                                              const drk_stat& r) {
  if (target < 0 || target >= classes) return NAN;
  return (r.m + logf(r.s)) - drk_widen(in[target]);
}
)";

const char* kWarpKernel = R"(
__global__ void __launch_bounds__(kThreads) drk_row_losses(const drk_element* x, const int64_t* targets, float* losses,
                                                           int64_t rows, int64_t classes, bool vectorised) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < rows; row += warps) {
    const drk_element* in = x + row * classes;
    const drk_stat r = drk_row_result<false>(in, classes, lane, 32, vectorised, nullptr);
    if (lane == 0) losses[row] = drk_row_loss(in, classes, targets[row], r);
  }
}

int64_t drk_row_blocks(int64_t rows) { return (rows + kWarps - 1) / kWarps; }
)";

const char* kBlockKernel = R"(
__global__ void __launch_bounds__(kThreads) drk_row_losses(const drk_element* x, const int64_t* targets, float* losses,
                                                           int64_t rows, int64_t classes, bool vectorised) {
  __shared__ drk_stat scratch[kWarps + 1];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const drk_element* in = x + row * classes;
    const drk_stat r = drk_row_result<true>(in, classes, threadIdx.x, kThreads, vectorised, scratch);
    if (threadIdx.x == 0) losses[row] = drk_row_loss(in, classes, targets[row], r);
  }
}

int64_t drk_row_blocks(int64_t rows) { return rows; }
)";

const char* kMeanKernel = R"(
// One block: the mean of losses[0, rows) into *loss, in a fixed order.
__global__ void __launch_bounds__(kThreads) drk_mean_loss(const float* losses, int64_t rows, drk_element* loss) {
  __shared__ float partial[kThreads];
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < rows; i += kThreads) sum += losses[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = drk_narrow(partial[0] / static_cast<float>(rows));
}
)";

}  // namespace

Result<std::string> render_cuda_cross_entropy(const Problem& problem, const Choice& choice) {
  const bool online = choice.value(cuda_cross_entropy_knob::passes) == "online";
  const bool block = choice.value(cuda_cross_entropy_knob::strategy) == "block_per_row";

  const std::optional<CudaSixteenBit> names = problem.precision == Precision::float32
                                                  ? std::nullopt
                                                  : std::optional(cuda_sixteen_bit(problem.precision));
  const std::string dense = names ? names->dense : "drk_is_dense_f32";

  std::string source = cuda_kernel_preamble(problem, choice);
  if (names) source += names->include;
  source += substitute(R"(
namespace {
)" + dense_check("drk_is_dense_i64", "DRK_I64") + (names ? dense_check(names->dense, names->dtype) : "") + R"(
constexpr int kThreads = @THREADS@;
constexpr int kWarps = kThreads / 32;
constexpr int kWidth = @W@;
)",
                       {{"THREADS", choice.value(cuda_cross_entropy_knob::threads)},
                        {"W", choice.value(cuda_cross_entropy_knob::vector_width)}});
  source += cuda_stat_protocol();
  source += cuda_softmax_statistics(online);
  source += cuda_stat_reductions();
  source += cuda_element_access(names);
  source += cuda_row_statistics();
  source += kRowLoss;
  source += block ? kBlockKernel : kWarpKernel;
  source += kMeanKernel;
  source += "\n}  // namespace\n";
  source += cuda_entry_point_opening(2);
  source += substitute(R"(  const drk_tensor& predictions = inputs[0];
  const drk_tensor& targets = inputs[1];
  drk_tensor& loss = outputs[0];
  if (!@DENSE@(predictions) || !drk_is_dense_i64(targets) || !@DENSE@(loss)) return DRK_E_BAD_ARGUMENT;
  if (predictions.ndim != 2 || targets.ndim != 1 || loss.ndim != 0) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t rows = predictions.shape[0];
  const int64_t classes = predictions.shape[1];
  if (targets.shape[0] != rows || classes == 0) return DRK_E_UNSUPPORTED_SHAPE;
  const drk_element* x = static_cast<const drk_element*>(predictions.data);
  float* losses = nullptr;
  if (rows > 0) {
    if (ctx->workspace == nullptr) return DRK_E_WORKSPACE;
    losses = static_cast<float*>(ctx->workspace(ctx, static_cast<size_t>(rows) * sizeof(float)));
    if (losses == nullptr) return DRK_E_WORKSPACE;
    const bool vectorised = kWidth == 4 && classes % 4 == 0 && drk_aligned(x, 4 * sizeof(drk_element));
    drk_row_losses<<<drk_grid(drk_row_blocks(rows)), kThreads, 0, stream>>>(
        x, static_cast<const int64_t*>(targets.data), losses, rows, classes, vectorised);
  }
  // The mean of no rows is NaN (0 / 0), as in torch.
  drk_mean_loss<<<1, kThreads, 0, stream>>>(losses, rows, static_cast<drk_element*>(loss.data));
  return drk_launch_status();
}
)",
                       {{"DENSE", dense}});
  return source;
}

}  // namespace drk::schedule::detail
