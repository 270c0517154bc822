// Observation: the fixed-size float vector the policy network reads at each turn.
//
// Layout (observation_size(device) floats; the problem's device sets the option slots):
//   [0, 8)    family one-hot (space.h's Family order)
//   [8, 12)   log2(1 + size) / 32 of the family's sizes: elementwise (elements, -, -, -),
//             rowwise and reduction (outer, reduce, inner, -), gemm and batched_gemm (M, N, K,
//             batch), conv2d as the implicit GEMM it is (N x H_out x W_out, C_out,
//             C_in x KH x KW, -), cross_entropy (rows, classes, -, -), attention (batch x
//             heads, queries, keys, head size)
//   [12, 16)  the family's operation: elementwise (stages / 8, 1 for float16 tensors, 1 for
//             a bfloat16 output, 1 for FP8 inputs with scales), rowwise (op one-hot of 4),
//             reduction (sum, mean, max one-hot), gemm and batched_gemm (b_layout nk, bias,
//             epilogue stages / 8, 1 for 16-bit tensors), conv2d (bias, epilogue stages / 8,
//             KH x KW / 16)
//   [16, 18)  turn / max_turns, and 1 when a previous turn exists
//   [18, 18 + max_option_slots(device))  the previous turn's options, one-hot per knob, knobs in
//             order
//   then 5    the previous turn's feedback: compiled, correct, honest,
//             clip(log(speedup), -3, 3) / 3 (0 when not correct), reward / 3
// Every entry is zero where it does not apply, so the first turn has no previous-turn signal.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"

namespace drk::schedule {

// What the previous turn chose and how it fared.
struct PreviousTurn {
  Choice choice;
  bool compiled = false;
  bool correct = false;
  bool honest = false;
  double speedup = 0.0;
  double reward = 0.0;
};

int observation_size(Device device);

// The entry that is 1 for a float16 or bfloat16 task of `family` (gemm and batched_gemm:
// operation slot 3, 0 for float32 tasks), from which the policy network
// masks the options that do not apply to the task's precision (space.h, option_applies); -1
// for families without 16-bit tasks.
int half_precision_feature(Family family);

// observation_size(problem.device) floats. `turn` counts from 1; `max_turns` >= 1; `previous`
// is a choice of the problem's device.
std::vector<float> observe(const Problem& problem, int turn, int max_turns,
                           const std::optional<PreviousTurn>& previous);

}  // namespace drk::schedule
