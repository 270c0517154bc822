// The conversation of one trajectory with a language model. Turn 1 is the system message and the
// task (prompt_templates.h: a KernelBench problem's Python source and the backend its ModelNew is
// to use, or our task, its tensors, its reference expression and the C ABI); each later turn adds
// the model's previous answer and the Verifier's feedback on it (the Oracle's multi-resolution
// report: compile log, failed checks and their evidence, timings, coverage, roofline, reward),
// or why the answer gave no candidate.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "actors/generator/llm/chat_message.h"
#include "actors/generator/llm/prompt_templates.h"

namespace drk::generator {

// What turn 1 says about the task.
struct TaskBrief {
  std::string name;             // "relu", "kernelbench/level1/19_ReLU"
  std::string device;           // "cpu", "cuda"
  bool kernelbench = false;     // a KernelBench problem: a Python ModelNew is asked for
  std::string problem_source;   // kernelbench: the problem file's Python source
  std::string backend;          // kernelbench: cuda | triton | cpp | pytorch
  std::string family;           // ours: elementwise, rowwise, gemm, ...
  std::string language;         // ours: "C++" or "CUDA C++"
  std::string inputs;           // ours: one tensor a line, "x: float32[1024, 1024]"
  std::string outputs;
  std::string reference;        // ours: the reference expression
  std::string shapes;           // ours: which shapes the kernel is called at and timed at (the shape range's, when declared)
};

// What a later turn says about the previous one.
struct TurnReport {
  uint32_t turn = 0;       // the turn about to be asked for, 2..turns
  uint32_t turns = 0;
  std::string status;      // "correct", "rejected", "did_not_compile", "no candidate", ...
  std::string feedback;    // the Feedback summary, or why the answer held no candidate
  double reward = 0.0;
};

// The report of an evaluated candidate: its status read from the Oracle's feedback `summary`
// (judging/feedback_report.h; "evaluated" where it names none).
TurnReport evaluated_turn(uint32_t turn, uint32_t turns, const std::string& summary, double reward);

// The system message and turn 1.
Conversation opening_conversation(const PromptTemplates& templates, const TaskBrief& task);

// The user message of a later turn.
ChatMessage feedback_message(const PromptTemplates& templates, const TurnReport& report);

// The feedback summary ("status=...; micro: ...; function: ...") as one group a line, for people
// and models; text that is no report stays as it is.
std::string feedback_lines(const std::string& summary);

}  // namespace drk::generator
