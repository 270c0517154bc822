// Pieces shared by the per-family renderers (internal to drk_schedule).
//
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"
#include "runtime/result.h"

namespace drk::schedule::detail {

// Includes, the contiguity check, the thread-count rule and the fork-join helper that every
// rendered kernel uses.
std::string kernel_preamble(const Problem& problem, const Choice& choice);

// `static inline float NAME(float v)` applying the stages in order (identity when empty).
std::string stage_function(const std::string& name, const std::vector<std::string>& stages);

// `text` with every "@KEY@" replaced by its value (templates of rendered code).
// The first lines of drk_kernel: its signature and the check of the tensor counts.
std::string entry_point_opening(int num_inputs);

std::string substitute(std::string text,
                       std::initializer_list<std::pair<std::string_view, std::string>> values);

Result<std::string> render_elementwise(const Problem& problem, const Choice& choice);
Result<std::string> render_rowwise(const Problem& problem, const Choice& choice);
Result<std::string> render_gemm(const Problem& problem, const Choice& choice);

}  // namespace drk::schedule::detail
