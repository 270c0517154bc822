// CandidateFeatures: a candidate as the fixed-length vector of numbers the Oracle's cost model
// (cost_model.h) reads. Everything comes from what a Candidate message carries, plus the
// task's size from the catalog (TaskScale), which the Candidate names but does not carry.
//
// Layout (candidate_feature_size() numbers, every one in [0, ~1.2]):
//   [device one-hot: cpu, cuda]
//   [family one-hot, in schedule::Family order]
//   [option one-hot per (device, family, knob), in kernels/schedule/space.h order: every knob
//    of every family of both devices has its own slots, so distinct schedules never share one]
//   [task bucket one-hot: kTaskBuckets slots, FNV-1a of the task name]
//   [log10(1 + flops) / 10, log10(1 + min bytes) / 10]
// A decision's option is read from its value text (the Generator writes "keep=8" when the
// policy kept the previous turn's "8"): the encoded option is the one rendered, never "keep".
// The layout follows the schedule space's tables: when they change, a cost model starts over
// (it lives only in the Oracle's memory, so that is every restart anyway).
//
// Thread-safety: pure functions over values and immutable tables.
// Errors: invalid_argument naming the candidate and what does not fit the schedule space
// (unknown family, knob or option).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"
#include "base/result.h"

namespace drk::oracle {

inline constexpr size_t kTaskBuckets = 16;

// The size of a task at the shapes of one device (kernels/catalog: estimate_flops,
// estimate_min_bytes). Zero when unknown: the size features are then 0.
struct TaskScale {
  double flops = 0;
  double min_bytes = 0;
};

// Task name -> its scale per device (index: msg::Device).
using TaskScales = std::map<std::string, std::array<TaskScale, 2>>;

size_t candidate_feature_size();

Result<std::vector<float>> candidate_features(msg::Candidate::Reader candidate, const TaskScales& scales);

}  // namespace drk::oracle
