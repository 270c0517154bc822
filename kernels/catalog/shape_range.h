// ShapeRange: the shapes a task declares it may be called at on one device, beyond its fixed
// ones (docs/tasks.md, "Shape ranges"): named dims, each a list of values or a range from..to by
// a step; every tensor's dims as those names or as numbers; how many shapes one evaluation draws
// from the range; and the shapes a candidate is timed at beside the task's own. The Evaluator
// draws from the evaluation's secret seed, so a candidate cannot know the drawn shapes in
// advance, and tries the candidate at each (correctness_trials.h).
//
// The task file's reader (task.cpp) parses and checks a range against the task; this file holds
// the value and the draw. Thread-safety: an immutable value. Errors: none (checked at load).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/catalog/expression.h"

namespace drk::kernels {

// The values one named dim takes: a list, or from..to (inclusive) by step.
struct DimValues {
  std::vector<int64_t> list;  // non-empty: the values; empty: the range below
  int64_t from = 1, to = 1, step = 1;

  size_t count() const { return list.empty() ? static_cast<size_t>((to - from) / step + 1) : list.size(); }
  int64_t at(size_t index) const { return list.empty() ? from + static_cast<int64_t>(index) * step : list[index]; }
  int64_t smallest() const { return at(0); }
  int64_t largest() const { return at(count() - 1); }
  bool holds(int64_t value) const {
    if (!list.empty()) return std::find(list.begin(), list.end(), value) != list.end();
    return value >= from && value <= to && (value - from) % step == 0;
  }
};

// One dim of a tensor in a range: a named dim, or a fixed number.
struct DimRef {
  std::string name;   // "" for a fixed number
  int64_t value = 0;  // the fixed number
};

struct ShapeRange {
  static constexpr uint32_t kDefaultDraws = 4;

  std::map<std::string, DimValues> dims;
  std::map<std::string, std::vector<DimRef>> tensors;  // every input and output of the task
  uint32_t draws = kDefaultDraws;
  // The shapes a candidate is timed at beyond the task's own (each names every dim with one of
  // its values), in the order declared; the reward weighs the speedups at all of them.
  static constexpr size_t kMostTimed = 8;
  std::vector<std::map<std::string, int64_t>> timed;

  // The tensors' shapes where each named dim has the value `values` gives it.
  ShapeMap at(const std::map<std::string, int64_t>& values) const;
  // Every named dim at its smallest value, or at its largest: the corners the loader checks.
  ShapeMap smallest() const;
  ShapeMap largest() const;
  // How many distinct shapes the range holds (saturates at UINT64_MAX).
  uint64_t size() const;
  // `draws` shapes, each named dim uniform over its values, from `seed`; distinct while the range
  // holds that many.
  std::vector<ShapeMap> draw(uint64_t seed) const;
  // For people and prompts: "R 1..512 by 1, C in {1, 3, 64}; x [R, C], y [R, C]; 4 drawn of 1536;
  // timed at C=64 R=512".
  std::string describe() const;
};

}  // namespace drk::kernels
