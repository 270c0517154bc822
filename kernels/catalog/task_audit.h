// Task audit: finds degenerate tasks, whose reward could be farmed without computing the task.
//
// A task is degenerate when a candidate that ignores part of the computation still passes its
// tolerance on fresh draws. audit_task() evaluates the task's LibTorch reference
// (kernels/catalog/reference.h) on several fresh input draws at a device's shapes and measures,
// in the task's own tolerance (|a - b| <= atol + rtol * |b|):
//   - replay: how much of a fresh draw's output the previous draw's output already matches. All
//     of it means the output is (near-)constant across inputs: a kernel that writes a remembered
//     answer passes;
//   - per input: how much of the output moves beyond the tolerance when only that input is drawn
//     afresh. None of it means the output does not depend on that input (a max/min after a relu,
//     a product with something that is always zero, ...): a kernel may skip reading it.
// Findings are sentences for people (`drk tasks audit`); TaskAudit::degenerate() is true when
// there is any. Thresholds are in AuditOptions.
//
// Thread-safety: pure function of its arguments (LibTorch's intra-op threads are the caller's).
// Errors: parse_error for a reference that does not parse, invalid_argument when LibTorch
// refuses it at these shapes (a loaded catalog's tasks never do) or when the task does not run
// on the device (it has no shapes there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/catalog/task.h"
#include "base/result.h"

namespace drk::kernels {

struct AuditOptions {
  uint32_t draws = 3;                 // fresh input draws compared with the first (>= 2)
  uint64_t seed = 0x5EED0A0D17ull;    // the audit is deterministic in its seed
  // An output is degenerate when the first draw's answer passes for at least this share of the
  // elements of every other draw (1.0: the whole output; a kernel that replays it passes).
  double replay_pass_limit = 1.0;
  // An input has no influence when drawing it afresh moves at most this share of the output
  // elements beyond the tolerance.
  double influence_floor = 0.0;
};

struct InputInfluence {
  std::string input;
  double changed_fraction = 0.0;  // of output elements beyond the tolerance, worst of the draws
  double max_change = 0.0;        // max |output change| / the output's scale (max |output|)
};

struct TaskAudit {
  std::string task;
  DeviceKind device = DeviceKind::cpu;
  size_t output_elements = 0;
  double output_scale = 0.0;         // max |output| over the draws
  double replay_pass_fraction = 0.0; // lowest over the draws: share the first draw's answer passes
  double max_spread = 0.0;           // max |output_k - output_0| / output_scale over the draws
  std::vector<InputInfluence> inputs;
  std::vector<std::string> findings; // why the task is degenerate; empty when it is not

  bool degenerate() const { return !findings.empty(); }
};

Result<TaskAudit> audit_task(const Task& task, DeviceKind device, const AuditOptions& options = {});

}  // namespace drk::kernels
