#include "actors/generator/llm/prompt_builder.h"

#include <cstdio>

#include "judging/feedback_report.h"

namespace drk::generator {

Conversation opening_conversation(const PromptTemplates& templates, const TaskBrief& task) {
  std::string first;
  if (task.kernelbench) {
    first = fill(templates.task_kernelbench, {{"task", task.name},
                                              {"device", task.device},
                                              {"backend", task.backend},
                                              {"problem_source", task.problem_source}});
  } else {
    first = fill(templates.task_native, {{"task", task.name},
                                         {"family", task.family},
                                         {"device", task.device},
                                         {"language", task.language},
                                         {"inputs", task.inputs},
                                         {"outputs", task.outputs},
                                         {"reference", task.reference},
                                         {"shapes", task.shapes},
                                         {"abi", templates.abi}});
  }
  return {{"system", templates.system}, {"user", std::move(first)}};
}

TurnReport evaluated_turn(uint32_t turn, uint32_t turns, const std::string& summary, double reward) {
  const auto groups = judging::parse_feedback_report(summary);
  const auto status = groups.find("status");
  return {turn, turns, status != groups.end() ? status->second : "evaluated", summary, reward};
}

ChatMessage feedback_message(const PromptTemplates& templates, const TurnReport& report) {
  char reward[32];
  std::snprintf(reward, sizeof reward, "%.3f", report.reward);
  return {"user", fill(templates.feedback, {{"turn", std::to_string(report.turn)},
                                            {"turns", std::to_string(report.turns)},
                                            {"status", report.status},
                                            {"feedback", feedback_lines(report.feedback)},
                                            {"reward", reward}})};
}

std::string feedback_lines(const std::string& summary) {
  // Groups are separated by "; " outside quoted values (judging/feedback_report.h).
  std::string out = "- ";
  bool quoted = false;
  for (size_t at = 0; at < summary.size(); ++at) {
    const char c = summary[at];
    if (c == '"') quoted = !quoted;
    if (!quoted && c == ';' && at + 1 < summary.size() && summary[at + 1] == ' ') {
      out += "\n- ";
      ++at;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace drk::generator
