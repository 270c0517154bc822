// GEMM kernels: y[M,N] = epilogue(a[M,K] * op(b) + bias). Rows of y are split between threads.
// The own kernel walks ijk (dot products) or ikj (row updates, contiguous in b for b_layout kn),
// optionally in square tiles, with `unroll` independent steps along k. The library option
// computes the product with ctx->lib->gemm_f32 (counted by the harness) and only the bias and
// epilogue are ours. `epilogue`: fused applies bias and stages while a row block is still in
// cache (at the store for untiled ijk); separate runs them as passes of their own afterwards.
#include "kernels/schedule/render_parts.h"
#include "kernels/schedule/stages.h"

namespace drk::schedule::detail {
namespace {

std::string b_element(bool b_transposed, const std::string& k, const std::string& j) {
  return b_transposed ? "b[(" + j + ") * K + (" + k + ")]" : "b[(" + k + ") * N + (" + j + ")]";
}

// Sum over u < unroll of a_u * b(k + u, j), the body of an ikj update.
std::string ikj_update(bool b_transposed, int unroll) {
  std::string sum;
  for (int step = 0; step < unroll; ++step) {
    if (step > 0) sum += " + ";
    sum += "a" + std::to_string(step) + " * " +
           b_element(b_transposed, "k + " + std::to_string(step), "j");
  }
  return sum;
}

std::string ikj_loads(int unroll) {
  std::string loads;
  for (int step = 0; step < unroll; ++step) {
    loads += "      const float a" + std::to_string(step) + " = a_row[k + " +
             std::to_string(step) + "];\n";
  }
  return loads;
}

// The product for rows [row_begin, row_end); `finish_rows(first, last)` is called for each
// completed row block when the epilogue is fused.
std::string product_function(bool b_transposed, bool ijk, int tile, int unroll, bool fused) {
  const std::string b_kj = b_element(b_transposed, "k", "j");
  const std::string b_ku = b_element(b_transposed, "k + u", "j");
  std::string source = R"(
void drk_product_rows(const float* __restrict a, const float* __restrict b, float* __restrict y,
                      const float* __restrict bias, int64_t N, int64_t K, int64_t row_begin,
                      int64_t row_end) {
  (void)bias;
  constexpr int kUnroll = @UNROLL@;
)";
  if (tile == 0 && ijk) {
    source += R"(  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* a_row = a + i * K;
    for (int64_t j = 0; j < N; ++j) {
      float partial[kUnroll] = {};
      int64_t k = 0;
      for (; k + kUnroll <= K; k += kUnroll) {
        for (int u = 0; u < kUnroll; ++u) partial[u] += a_row[k + u] * @B_KU@;
      }
      float sum = 0.0f;
      for (int u = 0; u < kUnroll; ++u) sum += partial[u];
      for (; k < K; ++k) sum += a_row[k] * @B_KJ@;
      y[i * N + j] = @STORE@;
    }
  }
}
)";
    return substitute(source, {{"B_KU", b_ku},
                               {"B_KJ", b_kj},
                               {"UNROLL", std::to_string(unroll)},
                               {"STORE", fused ? "drk_finish(sum, j, bias)" : "sum"}});
  }
  if (tile == 0) {
    source += R"(  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* a_row = a + i * K;
    float* y_row = y + i * N;
    for (int64_t j = 0; j < N; ++j) y_row[j] = 0.0f;
    int64_t k = 0;
    for (; k + kUnroll <= K; k += kUnroll) {
@LOADS@#pragma GCC ivdep
      for (int64_t j = 0; j < N; ++j) y_row[j] += @UPDATE@;
    }
    for (; k < K; ++k) {
      const float a0 = a_row[k];
#pragma GCC ivdep
      for (int64_t j = 0; j < N; ++j) y_row[j] += a0 * @B_KJ@;
    }
@FINISH@  }
}
)";
    return substitute(source, {{"LOADS", ikj_loads(unroll)},
                               {"UPDATE", ikj_update(b_transposed, unroll)},
                               {"B_KJ", b_kj},
                               {"UNROLL", std::to_string(unroll)},
                               {"FINISH", fused ? "    drk_finish_rows(y, bias, N, i, i + 1);\n" : ""}});
  }
  source += R"(  constexpr int64_t kTile = @TILE@;
  for (int64_t i0 = row_begin; i0 < row_end; i0 += kTile) {
    const int64_t i1 = i0 + kTile < row_end ? i0 + kTile : row_end;
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = 0; j < N; ++j) y[i * N + j] = 0.0f;
    }
    for (int64_t k0 = 0; k0 < K; k0 += kTile) {
      const int64_t k1 = k0 + kTile < K ? k0 + kTile : K;
      for (int64_t j0 = 0; j0 < N; j0 += kTile) {
        const int64_t j1 = j0 + kTile < N ? j0 + kTile : N;
)";
  if (ijk) {
    source += R"(        for (int64_t i = i0; i < i1; ++i) {
          const float* a_row = a + i * K;
          for (int64_t j = j0; j < j1; ++j) {
            float partial[kUnroll] = {};
            int64_t k = k0;
            for (; k + kUnroll <= k1; k += kUnroll) {
              for (int u = 0; u < kUnroll; ++u) partial[u] += a_row[k + u] * @B_KU@;
            }
            float sum = 0.0f;
            for (int u = 0; u < kUnroll; ++u) sum += partial[u];
            for (; k < k1; ++k) sum += a_row[k] * @B_KJ@;
            y[i * N + j] += sum;
          }
        }
)";
  } else {
    source += R"(        for (int64_t i = i0; i < i1; ++i) {
          const float* a_row = a + i * K;
          float* y_row = y + i * N;
          int64_t k = k0;
          for (; k + kUnroll <= k1; k += kUnroll) {
@LOADS@#pragma GCC ivdep
            for (int64_t j = j0; j < j1; ++j) y_row[j] += @UPDATE@;
          }
          for (; k < k1; ++k) {
            const float a0 = a_row[k];
#pragma GCC ivdep
            for (int64_t j = j0; j < j1; ++j) y_row[j] += a0 * @B_KJ@;
          }
        }
)";
  }
  source += R"(      }
    }
@FINISH@  }
}
)";
  std::string loads = ikj_loads(unroll);
  return substitute(source, {{"TILE", std::to_string(tile)},
                             {"LOADS", substitute(loads, {{"      const", "            const"}})},
                             {"UPDATE", ikj_update(b_transposed, unroll)},
                             {"B_KU", b_ku},
                             {"B_KJ", b_kj},
                             {"UNROLL", std::to_string(unroll)},
                             {"FINISH", fused ? "    drk_finish_rows(y, bias, N, i0, i1);\n" : ""}});
}

}  // namespace

std::string gemm_operands(const std::string& elements) {
  return substitute(R"(  const float* bias = nullptr;
  if (@BIAS@) {
    if (drk_element_count(inputs[2]) != N || inputs[2].ndim != 1) return DRK_E_UNSUPPORTED_SHAPE;
    bias = static_cast<const float*>(inputs[2].data);
  }
  if (@ELEMENTS@ == 0) return DRK_OK;
  const float* a = static_cast<const float*>(a_tensor.data);
  const float* b = static_cast<const float*>(b_tensor.data);
  float* y = static_cast<float*>(y_tensor.data);
  (void)a;
  (void)b;
  (void)bias;
)",
                    {{"ELEMENTS", elements}});
}

std::string batched_gemm_split_shapes(const std::string& dense_check) {
  return every_tensor_dense(dense_check) + R"(  const drk_tensor& a_tensor = inputs[0];
  const drk_tensor& b_tensor = inputs[1];
  drk_tensor& y_tensor = outputs[0];
  if (a_tensor.ndim != 3 || b_tensor.ndim != 3 || y_tensor.ndim != 3) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t batches = a_tensor.shape[0];
  const int64_t M = a_tensor.shape[1];
  const int64_t K = a_tensor.shape[2];
  const int64_t N = b_tensor.shape[@TRANSPOSED@ ? 1 : 2];
  if (b_tensor.shape[0] != batches || b_tensor.shape[@TRANSPOSED@ ? 2 : 1] != K || y_tensor.shape[0] != batches ||
      y_tensor.shape[1] != M || y_tensor.shape[2] != N) {
    return DRK_E_UNSUPPORTED_SHAPE;
  }
)";
}

std::string gemm_split_shapes(const std::string& dense_check) {
  return every_tensor_dense(dense_check) + R"(  const drk_tensor& a_tensor = inputs[0];
  const drk_tensor& b_tensor = inputs[1];
  drk_tensor& y_tensor = outputs[0];
  if (a_tensor.ndim != 2 || b_tensor.ndim != 2 || y_tensor.ndim != 2) return DRK_E_UNSUPPORTED_SHAPE;
  const int64_t M = a_tensor.shape[0];
  const int64_t K = a_tensor.shape[1];
  const int64_t N = @TRANSPOSED@ ? b_tensor.shape[0] : b_tensor.shape[1];
  const int64_t b_inner = @TRANSPOSED@ ? b_tensor.shape[1] : b_tensor.shape[0];
  if (b_inner != K || y_tensor.shape[0] != M || y_tensor.shape[1] != N) return DRK_E_UNSUPPORTED_SHAPE;
)";
}

std::string gemm_row_functions(const GemmParams& params, const Choice& choice) {
  const bool has_finish = params.has_bias || !params.epilogue.empty();
  const bool fused = choice.value(gemm_knob::epilogue) == "fused";
  const std::string tile_text = choice.value(gemm_knob::tile);
  const int tile = tile_text == "none" ? 0 : numeric_value(choice, gemm_knob::tile);
  std::string source = stage_function("drk_epilogue", params.epilogue);
  source += substitute(R"(
inline float drk_finish(float v, int64_t j, const float* bias) {
  (void)j;
  (void)bias;
  if (@BIAS@) v += bias[j];
  return drk_epilogue(v);
}

void drk_finish_rows(float* y, const float* bias, int64_t N, int64_t row_begin, int64_t row_end) {
  for (int64_t i = row_begin; i < row_end; ++i) {
    float* y_row = y + i * N;
    for (int64_t j = 0; j < N; ++j) y_row[j] = drk_finish(y_row[j], j, bias);
  }
}

void drk_bias_rows(float* y, const float* bias, int64_t N, int64_t row_begin, int64_t row_end) {
  (void)bias;
  if (!@BIAS@) return;
  for (int64_t i = row_begin; i < row_end; ++i) {
    float* y_row = y + i * N;
#pragma GCC ivdep
    for (int64_t j = 0; j < N; ++j) y_row[j] += bias[j];
  }
}

void drk_epilogue_rows(float* y, int64_t N, int64_t row_begin, int64_t row_end) {
  for (int64_t i = row_begin; i < row_end; ++i) {
    float* y_row = y + i * N;
    for (int64_t j = 0; j < N; ++j) y_row[j] = drk_epilogue(y_row[j]);
  }
}
)",
                       {{"BIAS", params.has_bias ? "true" : "false"}});
  if (choice.value(gemm_knob::use_library) != "library") {
    source += product_function(params.b_transposed, choice.value(gemm_knob::loop_order) == "ijk", tile,
                               numeric_value(choice, gemm_knob::unroll), fused && has_finish);
  }
  return source;
}

std::vector<std::string> gemm_finish_calls(const GemmParams& params, const Choice& choice,
                                           const std::string& y) {
  const bool has_finish = params.has_bias || !params.epilogue.empty();
  const bool fused = choice.value(gemm_knob::epilogue) == "fused";
  const bool library = choice.value(gemm_knob::use_library) == "library";
  std::vector<std::string> calls;
  if (!has_finish || (fused && !library)) return calls;
  if (fused) {
    calls.push_back("drk_finish_rows(" + y + ", bias, N, begin, end)");
    return calls;
  }
  if (params.has_bias) calls.push_back("drk_bias_rows(" + y + ", bias, N, begin, end)");
  if (!params.epilogue.empty()) calls.push_back("drk_epilogue_rows(" + y + ", N, begin, end)");
  return calls;
}

std::string gemm_library_call(bool b_transposed, const std::string& a, const std::string& b,
                              const std::string& y) {
  return substitute(R"(  if (ctx == nullptr || ctx->lib == nullptr || ctx->lib->gemm_f32 == nullptr) return DRK_E_LIBRARY;
  if (ctx->lib->gemm_f32(ctx, M, N, K, 1.0f, @A@, K, @B@, @LDB@, @TRANSPOSED_INT@, 0.0f, @Y@, N) != 0) {
    return DRK_E_LIBRARY;
  }
)",
                    {{"A", a},
                     {"B", b},
                     {"Y", y},
                     {"LDB", b_transposed ? "K" : "N"},
                     {"TRANSPOSED_INT", b_transposed ? "1" : "0"}});
}

Result<std::string> render_gemm(const Problem& problem, const Choice& choice) {
  auto params = gemm_params(problem);
  if (!params) return params.error();
  const bool library = choice.value(gemm_knob::use_library) == "library";

  std::string source = kernel_preamble(problem, choice);
  source += "\nnamespace {\n\n";
  source += gemm_row_functions(*params, choice);
  source += "\n}  // namespace\n";
  source += entry_point_opening(params->has_bias ? 3 : 2);
  source += substitute(gemm_split_shapes() + gemm_operands("M * N") + R"(  const int workers = drk_thread_count(ctx, @THREADS@, M);
)",
                       {{"TRANSPOSED", params->b_transposed ? "true" : "false"},
                        {"BIAS", params->has_bias ? "true" : "false"},
                        {"THREADS", choice.value(gemm_knob::threads)}});
  const std::string row_pass = R"(  drk_parallel(workers, [&](int worker, int worker_count) {
    int64_t begin = 0, end = 0;
    drk_share(M, worker, worker_count, &begin, &end);
    @CALL@;
  });
)";
  if (library) {
    source += gemm_library_call(params->b_transposed, "a", "b", "y");
  } else {
    source += substitute(row_pass, {{"CALL", "drk_product_rows(a, b, y, bias, N, K, begin, end)"}});
  }
  for (const auto& call : gemm_finish_calls(*params, choice, "y")) {
    source += substitute(row_pass, {{"CALL", call}});
  }
  source += "  return DRK_OK;\n}\n";
  return source;
}

}  // namespace drk::schedule::detail
