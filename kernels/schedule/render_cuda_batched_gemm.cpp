// CUDA batched GEMM kernels: y[B,M,N] = epilogue(a[B,M,K] * op(b[B]) + bias), b [B,K,N] (b_layout
// kn) or [B,N,K] (nk), bias [N] shared by the entries, float32. The gemm family's renderer in its
// batched form (cuda_gemm_source, render_cuda_gemm.cpp), with the gemm family's simt semantics:
// `block_tile`, `thread_tile`, `k_tile` and `staging` shape the shared-memory tiled product, whose
// grid covers the tiles of one entry in x and the entries in z (walked in strides of gridDim.z,
// at most 65535); `use_library` library calls ctx->lib->gemm_f32 once per entry on ctx->stream
// and only bias and epilogue are ours (no kernel of its own without them); `epilogue` fused
// applies bias and stages at the product's store, separate in a kernel of their own over y.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {

Result<std::string> render_cuda_batched_gemm(const Problem& problem, const Choice& choice) {
  return cuda_gemm_source(problem, choice, true);
}

}  // namespace drk::schedule::detail
