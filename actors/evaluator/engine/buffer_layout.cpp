#include "actors/evaluator/engine/buffer_layout.h"

#include <string>

namespace drk::evaluator {

Layout make_layout(const kernels::Task& task, kernels::DeviceKind device, uint32_t sets) {
  Layout layout;
  const auto& shapes = task.shapes(device);
  auto place = [&](const std::string& name, kernels::DType dtype) {
    TensorSlot slot;
    slot.shape = shapes.at(name);
    slot.dtype = dtype;
    for (int64_t d : slot.shape) slot.elements *= static_cast<size_t>(d);
    slot.offset = layout.bytes;
    layout.bytes += (slot.bytes() + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    return slot;
  };
  for (uint32_t s = 0; s < sets; ++s) {
    BufferSetLayout set;
    for (const auto& input : task.inputs) set.inputs.push_back(place(input.name, input.dtype));
    for (const auto& output : task.outputs) set.outputs.push_back(place(output, task.output_dtype));
    layout.sets.push_back(std::move(set));
  }
  return layout;
}

std::vector<uint32_t> all_sets(uint32_t count) {
  std::vector<uint32_t> sets;
  for (uint32_t s = 0; s < count; ++s) sets.push_back(s);
  return sets;
}

void fill_buffer_set(msg::BufferSet::Builder set, const std::vector<TensorSlot>& inputs,
                     const std::vector<TensorSlot>& outputs) {
  auto fill_views = [](capnp::List<msg::TensorView>::Builder views, const std::vector<TensorSlot>& slots) {
    for (unsigned t = 0; t < slots.size(); ++t) {
      views[t].setOffset(slots[t].offset);
      views[t].setDtype(static_cast<int32_t>(slots[t].dtype));  // DType mirrors drk_dtype
      auto shape = views[t].initShape(static_cast<unsigned>(slots[t].shape.size()));
      for (unsigned d = 0; d < slots[t].shape.size(); ++d) shape.set(d, slots[t].shape[d]);
    }
  };
  fill_views(set.initInputs(static_cast<unsigned>(inputs.size())), inputs);
  fill_views(set.initOutputs(static_cast<unsigned>(outputs.size())), outputs);
}

void fill_buffer_sets(capnp::List<msg::BufferSet>::Builder list, const Layout& layout,
                      const std::vector<uint32_t>& sets) {
  for (unsigned i = 0; i < sets.size(); ++i)
    fill_buffer_set(list[i], layout.sets[sets[i]].inputs, layout.sets[sets[i]].outputs);
}

void fill_reference_spec(msg::ReferenceSpec::Builder reference, const kernels::Task& task) {
  reference.setExpression(task.reference);
  auto names = reference.initInputNames(static_cast<unsigned>(task.inputs.size()));
  for (unsigned i = 0; i < task.inputs.size(); ++i) names.set(i, task.inputs[i].name);
  auto dtypes = reference.initInputDtypes(static_cast<unsigned>(task.inputs.size()));
  for (unsigned i = 0; i < task.inputs.size(); ++i) dtypes.set(i, static_cast<int32_t>(task.inputs[i].dtype));
}

}  // namespace drk::evaluator
