#include "kernels/catalog/task_audit.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/catalog/reference.h"

namespace drk::kernels {
namespace {

// An output as float64 values, contiguous.
struct Output {
  at::Tensor values;
  const double* data() const { return values.data_ptr<double>(); }
  size_t size() const { return static_cast<size_t>(values.numel()); }
};

// float16 inputs are evaluated in float32: LibTorch 1.13's CPU has no float16 matmul, and the
// rounded inputs in float32 tell as well whether the output moves with them.
Result<Output> evaluate(const Reference& reference, const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> widened;
  for (const auto& input : inputs)
    widened.push_back(input.scalar_type() == at::kHalf ? input.to(at::kFloat) : input);
  auto output = reference.run(widened);
  if (!output) return output.error();
  return Output{output->to(at::kDouble).contiguous()};
}

// Share of `fresh`'s elements that `stale` matches within the tolerance.
double pass_fraction(const Output& stale, const Output& fresh, const Tolerance& tolerance) {
  if (fresh.size() == 0) return 1.0;
  size_t passed = 0;
  for (size_t i = 0; i < fresh.size(); ++i) {
    double want = fresh.data()[i];
    if (std::fabs(stale.data()[i] - want) <= tolerance.atol + tolerance.rtol * std::fabs(want)) ++passed;
  }
  return static_cast<double>(passed) / static_cast<double>(fresh.size());
}

double max_abs_difference(const Output& a, const Output& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a.data()[i] - b.data()[i]));
  return worst;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%%", 100.0 * fraction);
  return text;
}

}  // namespace

Result<TaskAudit> audit_task(const Task& task, DeviceKind device, const AuditOptions& options) {
  if (options.draws < 2)
    return make_error(Errc::invalid_argument, "a task audit needs at least 2 draws to compare (got " +
                                                  std::to_string(options.draws) + ")");
  if (!task.runs_on(device))
    return make_error(Errc::invalid_argument, "task '" + task.name + "' has no " + std::string(device_name(device)) +
                                                  " shapes: it runs on " + task.devices_text() + " only");
  auto reference = Reference::create(task);
  if (!reference) return reference.error();
  const Tolerance tolerance = task.output_tolerance();

  TaskAudit audit;
  audit.task = task.name;
  audit.device = device;
  std::vector<std::vector<at::Tensor>> draws;
  std::vector<Output> outputs;
  for (uint32_t d = 0; d < options.draws; ++d) {
    draws.push_back(draw_inputs(task, device, options.seed + d));
    auto output = evaluate(*reference, draws.back());
    if (!output) return make_error(output.error().code, "task '" + task.name + "': " + output.error().message);
    for (size_t i = 0; i < output->size(); ++i) audit.output_scale = std::max(audit.output_scale, std::fabs(output->data()[i]));
    outputs.push_back(std::move(*output));
  }
  audit.output_elements = outputs[0].size();
  const double scale = audit.output_scale > 0 ? audit.output_scale : 1.0;

  audit.replay_pass_fraction = 1.0;
  for (uint32_t d = 1; d < options.draws; ++d) {
    audit.replay_pass_fraction = std::min(audit.replay_pass_fraction, pass_fraction(outputs[0], outputs[d], tolerance));
    audit.max_spread = std::max(audit.max_spread, max_abs_difference(outputs[0], outputs[d]) / scale);
  }
  if (audit.replay_pass_fraction >= options.replay_pass_limit)
    audit.findings.push_back("the output is near-constant across fresh inputs: the first draw's answer passes the "
                             "tolerance on " + percent(audit.replay_pass_fraction) +
                             " of every other draw's elements (largest change " + percent(audit.max_spread) +
                             " of the output's scale), so a kernel that replays it passes");

  // One input drawn afresh at a time, the others kept from the first draw.
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    InputInfluence influence;
    influence.input = task.inputs[i].name;
    for (uint32_t d = 1; d < options.draws; ++d) {
      std::vector<at::Tensor> perturbed = draws[0];
      perturbed[i] = draws[d][i];
      auto output = evaluate(*reference, perturbed);
      if (!output) return make_error(output.error().code, "task '" + task.name + "': " + output.error().message);
      influence.changed_fraction = std::max(influence.changed_fraction, 1.0 - pass_fraction(outputs[0], *output, tolerance));
      influence.max_change = std::max(influence.max_change, max_abs_difference(outputs[0], *output) / scale);
    }
    if (influence.changed_fraction <= options.influence_floor)
      audit.findings.push_back("input '" + influence.input + "' has no influence: drawing it afresh moves " +
                               percent(influence.changed_fraction) +
                               " of the output beyond the tolerance (largest change " + percent(influence.max_change) +
                               " of the output's scale), so a kernel may ignore it");
    audit.inputs.push_back(std::move(influence));
  }
  return audit;
}

}  // namespace drk::kernels
