// Batched GEMM kernels: y[b] = epilogue(a[b] * op(b[b]) + bias) for every batch index, a
// [B,M,K], b [B,K,N] (b_layout kn) or [B,N,K] (nk), y [B,M,N], bias [N]. Each matrix is computed
// by the gemm family's row functions (render_gemm.cpp), so loop_order, tile, unroll, use_library
// and epilogue mean what they mean there. `parallel_over`: batch gives each thread whole
// matrices; rows splits the rows of every matrix between the threads. The library option calls
// ctx->lib->gemm_f32 once per matrix from the caller (the library has its own threads); only the
// bias and epilogue passes are then ours, split as `parallel_over` says.
#include "kernels/schedule/render_parts.h"

namespace drk::schedule::detail {

static_assert(int{batched_gemm_knob::loop_order} == int{gemm_knob::loop_order} &&
                  int{batched_gemm_knob::tile} == int{gemm_knob::tile} &&
                  int{batched_gemm_knob::unroll} == int{gemm_knob::unroll} &&
                  int{batched_gemm_knob::use_library} == int{gemm_knob::use_library} &&
                  int{batched_gemm_knob::epilogue} == int{gemm_knob::epilogue} &&
                  int{batched_gemm_knob::threads} == int{gemm_knob::threads},
              "gemm_row_functions reads a batched_gemm choice with gemm_knob's positions");

Result<std::string> render_batched_gemm(const Problem& problem, const Choice& choice) {
  auto params = gemm_params(problem);
  if (!params) return params.error();
  const bool library = choice.value(batched_gemm_knob::use_library) == "library";
  const bool over_batch = choice.value(batched_gemm_knob::parallel_over) == "batch";

  std::string source = kernel_preamble(problem, choice);
  source += "\nnamespace {\n\n";
  source += gemm_row_functions(*params, choice);
  source += R"(
// Calls body(batch, row_begin, row_end) for the rows `worker` of `workers` owns: whole matrices
// when the threads split the batch, a share of every matrix's rows otherwise.
template <typename Body>
void drk_batched_share(bool over_batch, int64_t batches, int64_t M, int worker, int workers, const Body& body) {
  int64_t begin = 0, end = 0;
  if (over_batch) {
    drk_share(batches, worker, workers, &begin, &end);
    for (int64_t batch = begin; batch < end; ++batch) body(batch, int64_t{0}, M);
    return;
  }
  drk_share(M, worker, workers, &begin, &end);
  for (int64_t batch = 0; batch < batches; ++batch) body(batch, begin, end);
}
)";
  source += "\n}  // namespace\n";
  source += entry_point_opening(params->has_bias ? 3 : 2);
  source += substitute(batched_gemm_split_shapes() + "\n" + gemm_operands("batches * M * N") + R"(  const bool over_batch = @OVER_BATCH@;
  const int workers = drk_thread_count(ctx, @THREADS@, over_batch ? batches : M);
)",
                       {{"TRANSPOSED", params->b_transposed ? "true" : "false"},
                        {"BIAS", params->has_bias ? "true" : "false"},
                        {"OVER_BATCH", over_batch ? "true" : "false"},
                        {"THREADS", choice.value(batched_gemm_knob::threads)}});
  const std::string matrix_pass = R"(  drk_parallel(workers, [&](int worker, int worker_count) {
    drk_batched_share(over_batch, batches, M, worker, worker_count,
                      [&](int64_t batch, int64_t begin, int64_t end) { @CALL@; });
  });
)";
  if (library) {
    source += "  for (int64_t batch = 0; batch < batches; ++batch) {\n";
    source += gemm_library_call(params->b_transposed, "a + batch * M * K", "b + batch * K * N", "y + batch * M * N");
    source += "  }\n";
  } else {
    source += substitute(matrix_pass, {{"CALL", "drk_product_rows(a + batch * M * K, b + batch * K * N, "
                                                "y + batch * M * N, bias, N, K, begin, end)"}});
  }
  for (const auto& call : gemm_finish_calls(*params, choice, "y + batch * M * N")) {
    source += substitute(matrix_pass, {{"CALL", call}});
  }
  source += "  return DRK_OK;\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
