// Test support for the CUDA scheduling space: corner points of a family's knobs, catalog tasks
// as the Generator sees them, and the sample of rendered points that the compile test
// (render_cuda_test.cpp) builds and the GPU test (render_cuda_evaluation_test.cpp) runs.
//
// Thread-safety: pure functions. Errors: a task missing from the catalog is a fault of the test
// (std::runtime_error naming it).
#pragma once

#include <string>
#include <vector>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"
#include "messages/drk.capnp.h"

namespace drk::testing {

// Every knob at its first option; every knob at its last; then knobs alternating first/last,
// and the complement: each knob sees both extremes, next to both extremes of its neighbours. An
// option that does not apply to tasks of `precision` (schedule::option_applies) is replaced by
// the knob's first option, which always applies.
std::vector<schedule::Choice> corner_choices(schedule::Family family, schedule::Device device,
                                             schedule::Precision precision = schedule::Precision::float32);

// The catalog's tasks (kernels/tasks) as RolloutRequests describe them on `device`.
std::vector<schedule::Problem> catalog_problems(const std::vector<std::string>& names, msg::Device device);

struct RenderPoint {
  schedule::Problem problem;
  schedule::Choice choice;
};

// CUDA points: the corners of each family on its representative task (a three-stage chain,
// softmax, gemm_multiply_leakyrelu), a corner of every other rowwise op, the library-only
// matmul, the float16 matmul_fp16's corners each with both math options (simt and tensor_core),
// and a float16 linear layer (b_layout nk, bias and epilogue) on tensor cores (27 points).
std::vector<RenderPoint> render_corner_sample();

// matmul_fp16's float16 corners, each with math=simt and with math=tensor_core (8 points).
std::vector<RenderPoint> half_matmul_points();
// matmul@bfloat16's corners, each with math=simt and with math=tensor_core (8 points).
std::vector<RenderPoint> brain_matmul_points();

// 16-bit elementwise points: relu@float16 and gelu@bfloat16 at the corners of the cuda elementwise
// space, then `chain` (a three-stage elementwise problem of either dtype; default: relu's variants
// given the stages `v * 2.0f | v > 0.0f ? v : 0.1f * v | tanhf(v)`) in float16 and bfloat16 with
// fusion pairs and unfused, where groups after the first go through a float32 workspace (12 points).
std::vector<RenderPoint> half_elementwise_points();
// 16-bit rowwise points: softmax@bfloat16 at every corner of the cuda rowwise space, layer_norm@bfloat16
// (weight and bias 16-bit too) at two, log_softmax@float16 and rms_norm@float16 at one each (8 points).
std::vector<RenderPoint> half_rowwise_points();
// 16-bit reduction points: sum_reduction@bfloat16 at every corner of the cuda reduction space,
// mean_reduction@float16 with warp_per_output, max_reduction@bfloat16 at its first corner and with
// warp_per_output (7 points).
std::vector<RenderPoint> half_reduction_points();
// 16-bit cross-entropy points: cross_entropy@bfloat16 at every corner of the cuda cross_entropy
// space, cross_entropy@float16 at its second corner.
std::vector<RenderPoint> half_cross_entropy_points();
// 16-bit batched GEMM points: batched_matmul@float16 and batched_matmul@bfloat16 at the corners
// of the cuda batched_gemm space (the library option, float32's, replaced by own; 8 points).
std::vector<RenderPoint> half_batched_gemm_points();
// The problems of half_elementwise_points' chains: `relu@DTYPE` with three stages.
std::vector<schedule::Problem> half_chain_problems();
// FP8 elementwise points: relu@float8_e4m3fn and gelu@float8_e5m2 at the corners of the cuda
// elementwise space, then the three-stage chain (relu_chain@float8_e4m3fn) with fusion pairs and
// unfused, through the float32 workspace (10 points).
std::vector<RenderPoint> float8_elementwise_points();
// FP8 GEMM points: matmul@float8_e4m3fn (b [K,N], transposed into the workspace) and
// gemm_multiply_leakyrelu@float8_e5m2 (b [N,K], an FP8 bias and an epilogue) at the corners of the
// cuda gemm space (block tiles 32 -> 64 and 128, both stagings, fused and separate finishes; 8 points).
std::vector<RenderPoint> float8_gemm_points();

// CUDA points of the batched_gemm and conv2d families: batched_matmul's corners and a batched
// linear layer (b_layout nk, bias, epilogue; own fused, own separate, library with our epilogue);
// the corners of conv2d_relu_biasadd (an epilogue tensor read by channel), two of conv2d and two
// of conv2d_relu_hardswish: every algorithm with every staging (15 points).
std::vector<RenderPoint> gemm_conv_corner_sample();

// CUDA points of the reduction, cross_entropy and attention families, every option of every
// knob among them: sum_reduction's block_per_output and thread_per_output float4 corners,
// mean_reduction with warp_per_output, max_reduction's first corner, three of cross_entropy's
// corners and scaled_dot_product_attention's four (11 points).
std::vector<RenderPoint> reduction_attention_corner_sample();
// `choice` (a cuda reduction choice) with strategy warp_per_output, the option between the corners.
schedule::Choice reduction_warp_choice(schedule::Choice choice);

}  // namespace drk::testing
