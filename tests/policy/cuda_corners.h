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
// and the complement: each knob sees both extremes, next to both extremes of its neighbours.
std::vector<schedule::Choice> corner_choices(schedule::Family family, schedule::Device device);

// The catalog's tasks (kernels/tasks) as RolloutRequests describe them on `device`.
std::vector<schedule::Problem> catalog_problems(const std::vector<std::string>& names, msg::Device device);

struct RenderPoint {
  schedule::Problem problem;
  schedule::Choice choice;
};

// CUDA points: the corners of each family on its representative task (a three-stage chain,
// softmax, gemm_multiply_leakyrelu), a corner of every other rowwise op, and the library-only
// matmul (17 points).
std::vector<RenderPoint> render_corner_sample();

}  // namespace drk::testing
