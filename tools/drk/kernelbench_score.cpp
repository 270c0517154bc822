#include "tools/drk/kernelbench_score.h"

#include <cmath>
#include <cstdio>

namespace drk::tools {

std::vector<LevelScore> score_levels(const std::vector<ScoredSample>& samples,
                                     const std::map<int, std::set<int>>& problems) {
  std::map<int, std::set<int>> level_problems = problems;
  std::map<int, LevelScore> scores;
  for (const auto& sample : samples) level_problems[sample.level].insert(sample.problem_id);
  for (const auto& [level, ids] : level_problems) {
    scores[level].level = level;
    scores[level].problems = ids.size();
  }
  std::map<int, double> log_speedups;
  for (const auto& sample : samples) {
    LevelScore& score = scores[sample.level];
    ++score.candidates;
    if (sample.sample_id != 0) continue;
    score.compiled += sample.compiled ? 1 : 0;
    if (!sample.correct) continue;
    ++score.correct;
    log_speedups[sample.level] += std::log(sample.speedup);
    for (size_t i = 0; i < kFastPThresholds.size(); ++i)
      score.fast_p[i] += sample.speedup > kFastPThresholds[i] ? 1 : 0;
  }
  std::vector<LevelScore> ordered;
  for (auto& [level, score] : scores) {
    if (score.correct > 0) score.geomean_speedup = std::exp(log_speedups[level] / static_cast<double>(score.correct));
    for (double& fraction : score.fast_p) fraction /= static_cast<double>(score.problems);
    ordered.push_back(score);
  }
  return ordered;
}

std::string score_table(const std::vector<LevelScore>& scores) {
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %8s %10s %8s %7s %7s", "level", "problems", "candidates", "compiled", "correct",
                "geomean");
  std::string table = line;
  for (double p : kFastPThresholds) {
    std::snprintf(line, sizeof line, " %8s", p == 0 ? "fast_0" : ("fast_" + std::to_string(p).substr(0, 3)).c_str());
    table += line;
  }
  table += "\n";
  for (const auto& score : scores) {
    std::snprintf(line, sizeof line, "%-6d %8zu %10zu %8zu %7zu %7.3f", score.level, score.problems, score.candidates,
                  score.compiled, score.correct, score.geomean_speedup);
    table += line;
    for (double fraction : score.fast_p) {
      std::snprintf(line, sizeof line, " %8.3f", fraction);
      table += line;
    }
    table += "\n";
  }
  return table;
}

}  // namespace drk::tools
