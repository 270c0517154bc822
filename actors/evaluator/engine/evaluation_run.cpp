#include "actors/evaluator/engine/evaluation_run.h"

#include <cstring>

#include "actors/evaluator/input_nudge.h"
#include "actors/evaluator/output_comparison.h"

namespace drk::evaluator {

void EvaluationRun::lay_out(Layout new_layout) {
  layout = std::move(new_layout);
  draw_seeds.assign(layout.sets.size(), 0);
  pristine_copies.assign(layout.sets.size(), {});
  nudges.clear();
}

EvaluationRun EvaluationRun::at(const kernels::Task& shaped, uint32_t sets) const {
  EvaluationRun other;
  other.task = &shaped;
  other.reference = reference;
  other.shapes = shapes;
  other.store = store;
  other.lay_out(make_layout(shaped, shapes, sets));
  other.tolerance = tolerance;
  other.seed = seed;
  other.out = out;
  other.own_kernels = own_kernels;
  return other;
}

void EvaluationRun::write_inputs(uint32_t set, uint64_t draw_seed) {
  draw_seeds[set] = draw_seed;
  nudges.erase(set);
  const auto& slots = layout.sets[set].inputs;
  if (store->on_device()) {
    std::vector<at::Tensor> places;
    for (const auto& slot : slots) places.push_back(view(slot));
    reference->draw_into(*task, shapes, draw_seed, places);
    return;
  }
  std::vector<at::Tensor> inputs = reference->draw(*task, shapes, draw_seed);
  for (size_t i = 0; i < slots.size(); ++i) std::memcpy(view(slots[i]).data_ptr(), inputs[i].data_ptr(), slots[i].bytes());
  pristine_copies[set] = std::move(inputs);
}

void EvaluationRun::nudge(uint32_t set, uint64_t nudge_seed) {
  std::vector<at::Tensor> places;
  for (const auto& slot : layout.sets[set].inputs) places.push_back(view(slot));
  nudge_inputs(places, nudge_seed);
  if (!store->on_device()) nudge_inputs(pristine_copies[set], nudge_seed);
  nudges[set] = nudge_seed;
}

std::vector<at::Tensor> EvaluationRun::pristine(uint32_t set) const {
  if (!store->on_device()) return pristine_copies[set];
  std::vector<at::Tensor> inputs;
  for (const auto& slot : layout.sets[set].inputs)
    inputs.push_back(
        at::empty(slot.shape, at::TensorOptions().dtype(kernels::scalar_type_of(slot.dtype)).device(store->device())));
  reference->draw_into(*task, shapes, draw_seeds[set], inputs);
  if (const auto nudged = nudges.find(set); nudged != nudges.end()) nudge_inputs(inputs, nudged->second);
  return inputs;
}

void EvaluationRun::poison_outputs(uint32_t set) {
  for (const auto& slot : layout.sets[set].outputs) poison(view(slot));
}

bool EvaluationRun::inputs_mutated(uint32_t set, const std::vector<at::Tensor>& inputs) const {
  const auto& slots = layout.sets[set].inputs;
  for (size_t i = 0; i < slots.size(); ++i)
    if (!same_bits(view(slots[i]), inputs[i])) return true;
  return false;
}

Result<at::Tensor> EvaluationRun::expected_output(const std::vector<at::Tensor>& inputs) const {
  const kernels::DType dtype = task->output_dtype;
  if ((dtype != kernels::DType::float16 && dtype != kernels::DType::bfloat16) || !reference->runs_in_float64())
    return reference->run(inputs);
  auto exact = reference->run(in_float64(inputs));
  if (!exact) return reference->run(inputs);  // an expression LibTorch cannot evaluate in float64
  return exact->to(dtype == kernels::DType::float16 ? at::kHalf : at::kBFloat16);
}

std::vector<at::Tensor> in_float64(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> wide;
  for (const auto& input : inputs) wide.push_back(input.is_floating_point() ? input.to(at::kDouble) : input);
  return wide;
}

}  // namespace drk::evaluator
