// KernelBench's scores of a run, per level, as its scripts/benchmark_eval_analysis.py and
// src/score.py compute them: of a level's problems, how many compiled and how many are correct,
// the geometric mean of the correct ones' speedups, and fast_p, the fraction of the level's
// problems whose candidate is correct AND faster than the reference by more than p
// (speedup > p), at p = 0, 1.0, 1.2, 1.5, 2.0. fast_0 is the fraction correct.
//
// As in KernelBench's analysis, a problem's candidate is its sample 0, and a problem without one
// counts as neither compiled nor correct: the denominator is the level's problems, not its
// candidates. The speedup is the one recorded for the sample (drkernel's: the reference's median
// over the candidate's, timed side by side), not a baseline file's.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace drk::tools {

inline constexpr std::array<double, 5> kFastPThresholds{0.0, 1.0, 1.2, 1.5, 2.0};

struct ScoredSample {
  int level = 0;
  int problem_id = 0;
  int sample_id = 0;
  bool compiled = false;
  bool correct = false;
  double speedup = 0;  // meaningful when correct
};

struct LevelScore {
  int level = 0;
  size_t problems = 0;    // the denominator of every rate
  size_t candidates = 0;  // samples of all its problems
  size_t compiled = 0;    // problems whose sample 0 compiled
  size_t correct = 0;     // problems whose sample 0 is correct
  double geomean_speedup = 0;  // of the correct ones; 0 when none is
  std::array<double, kFastPThresholds.size()> fast_p{};
};

// The scores of each level that has a problem in `problems` (problem ids by level) or a sample;
// a sample's problem counts among its level's problems whether `problems` lists it or not.
std::vector<LevelScore> score_levels(const std::vector<ScoredSample>& samples,
                                     const std::map<int, std::set<int>>& problems);

// A header line and a line per level: level, problems, candidates, compiled, correct, geomean,
// fast_0 ... fast_2.0 (three decimals).
std::string score_table(const std::vector<LevelScore>& scores);

}  // namespace drk::tools
