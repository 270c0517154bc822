// Observation: the fixed-size float vector the policy network reads at each turn.
//
// Layout (observation_size(device) floats; the problem's device sets the option slots):
//   [0, 3)    family one-hot (elementwise, rowwise, gemm)
//   [3, 7)    log2(1 + size) / 32 of the family's sizes: elementwise (elements, -, -, -),
//             rowwise (outer, reduce, inner, -), gemm (M, N, K, -)
//   [7, 11)   the family's operation: elementwise (stages / 8), rowwise (op one-hot of 4),
//             gemm (b_layout nk, bias, epilogue stages / 8, 1 for float16 tensors)
//   [11, 13)  turn / max_turns, and 1 when a previous turn exists
//   [13, 13 + max_option_slots(device))  the previous turn's options, one-hot per knob, knobs in
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

// The entry that is 1 for a float16 task of `family` (gemm: operation slot 3, 0 for float32
// tasks, so that float32 observations are what they were), from which the policy network
// masks the options that do not apply to the task's precision (space.h, option_applies); -1
// for families without float16 tasks.
int half_precision_feature(Family family);

// observation_size(problem.device) floats. `turn` counts from 1; `max_turns` >= 1; `previous`
// is a choice of the problem's device.
std::vector<float> observe(const Problem& problem, int turn, int max_turns,
                           const std::optional<PreviousTurn>& previous);

}  // namespace drk::schedule
