#include "actors/evaluator/sandbox_library.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "kernels/catalog/reference_build.h"

namespace drk::evaluator {
namespace {

std::atomic<uint64_t> calls{0};

int gemm_f32(const drk_context* ctx, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, int b_transposed, float beta, float* c, int64_t ldc) {
  calls.fetch_add(1, std::memory_order_relaxed);
  if (m < 0 || n < 0 || k < 0 || !a || !b || !c || lda < k || ldc < n || ldb < (b_transposed ? k : n))
    return DRK_E_BAD_ARGUMENT;
  if (m == 0 || n == 0) return DRK_OK;
  try {
    // On CUDA the pointers are device memory; LibTorch queues on the legacy default stream,
    // which orders itself after the candidate's (blocking) stream.
    auto options = at::TensorOptions().dtype(at::kFloat);
    if (ctx && ctx->device == DRK_CUDA) options = options.device(at::kCUDA, 0);
    at::Tensor c_view = at::from_blob(c, {m, n}, {ldc, 1}, options);
    if (k == 0) {
      if (beta == 0.0f) c_view.zero_();
      else c_view.mul_(beta);
      return DRK_OK;
    }
    at::Tensor a_view = at::from_blob(const_cast<float*>(a), {m, k}, {lda, 1}, options);
    at::Tensor b_view = b_transposed ? at::from_blob(const_cast<float*>(b), {n, k}, {ldb, 1}, options).t()
                                     : at::from_blob(const_cast<float*>(b), {k, n}, {ldb, 1}, options);
    if (beta == 0.0f) {
      // C may hold anything (NaN poison included): it is not read.
      at::mm_out(c_view, a_view, b_view);
      if (alpha != 1.0f) c_view.mul_(alpha);
    } else {
      c_view.addmm_(a_view, b_view, beta, alpha);
    }
    return DRK_OK;
  } catch (const c10::Error&) {
    return DRK_E_LIBRARY;
  }
}

const drk_library table{DRK_ABI_VERSION, &gemm_f32};

}  // namespace

const drk_library* sandbox_library() { return &table; }
uint64_t library_calls() { return calls.load(std::memory_order_relaxed); }
void set_library_threads(int threads) {
  kernels::set_reference_threads(threads > 0 ? threads : 1);
  // A candidate's own OpenMP runtime (a load_inline extension built with -fopenmp links the
  // system's libgomp, which pip's LibTorch, with a libgomp of its own, does not share) takes its
  // thread count from the environment when it loads: the same bound. Without it, on the H200 host
  // an honest OpenMP candidate ran 16 threads for a pool of 8, spinning between calls.
  ::setenv("OMP_NUM_THREADS", std::to_string(threads > 0 ? threads : 1).c_str(), 1);
  // Such a second runtime's threads also spin after each parallel region (GNU's default), beside
  // LibTorch's own: on the H200 host both pools spun between calls, twice the pool's cores, and an
  // honest OpenMP candidate was judged work_after_return. Passive waiting puts the candidate's
  // threads to sleep when its region ends; LibTorch's runtime, started before, keeps its default.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  // Starts the intra-op pool now, so that its threads are not mistaken for threads a candidate
  // left running (the run handler counts threads around every batch).
  at::parallel_for(0, threads > 0 ? threads : 1, 1, [](int64_t, int64_t) {});
  // And the BLAS's threads, which a build may start at its first product of some size and layout:
  // once on the H200 host (pip LibTorch, 8 threads) an honest library call was reported as
  // threads_left_running; with this warm-up two runs after it passed (docs/benchmarks.md).
  const at::Tensor square = at::ones({256, 256});
  (void)at::mm(square, square);
  (void)at::mm(square, square.t());
}

}  // namespace drk::evaluator
