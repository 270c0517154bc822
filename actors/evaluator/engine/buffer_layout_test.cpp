#include "actors/evaluator/engine/buffer_layout.h"

#include <capnp/message.h>

#include "kernels/abi/drk_kernel.h"
#include "tests/doctest_drk.h"

using namespace drk;
using namespace drk::evaluator;

namespace {

// y = x * w over a 3 x 5 float32 x and a 5-element int64 w; other shapes on the GPU.
kernels::Task two_input_task() {
  kernels::Task task;
  task.name = "scale";
  task.inputs = {{"x", kernels::DType::float32, {}}, {"w", kernels::DType::int64, {}}};
  task.outputs = {"y"};
  task.cpu_shapes = {{"x", {3, 5}}, {"w", {5}}, {"y", {3, 5}}};
  task.gpu_shapes = {{"x", {1024, 1025}}, {"w", {1025}}, {"y", {1024, 1025}}};
  return task;
}

}  // namespace

DRK_TEST_CASE("every tensor of every set starts on its own page, inputs then outputs, set after set") {
  const Layout layout = make_layout(two_input_task(), kernels::DeviceKind::cpu, 3);
  DRK_REQUIRE(layout.sets.size() == 3);
  size_t expected_offset = 0;
  for (const auto& set : layout.sets) {
    DRK_REQUIRE(set.inputs.size() == 2);
    DRK_REQUIRE(set.outputs.size() == 1);
    DRK_CHECK(set.inputs[0].offset == expected_offset);
    DRK_CHECK(set.inputs[1].offset == expected_offset + kTensorAlignment);
    DRK_CHECK(set.outputs[0].offset == expected_offset + 2 * kTensorAlignment);
    expected_offset += 3 * kTensorAlignment;
  }
  DRK_CHECK(layout.bytes == 9 * kTensorAlignment);
  const TensorSlot& w = layout.sets[0].inputs[1];
  DRK_CHECK(w.elements == 5);
  DRK_CHECK(w.bytes() == 40);  // int64
  DRK_CHECK(layout.sets[0].outputs[0].bytes() == 60);
}

DRK_TEST_CASE("a tensor larger than a page takes the whole pages it spans, at the device's shapes") {
  const Layout layout = make_layout(two_input_task(), kernels::DeviceKind::cuda, 1);
  const size_t x_bytes = 1024 * 1025 * 4;
  const size_t x_pages = (x_bytes + kTensorAlignment - 1) / kTensorAlignment;
  DRK_CHECK(layout.sets[0].inputs[0].shape == kernels::Shape{1024, 1025});
  DRK_CHECK(layout.sets[0].inputs[1].offset == x_pages * kTensorAlignment);
  DRK_CHECK(layout.sets[0].outputs[0].offset % kTensorAlignment == 0);
}

DRK_TEST_CASE("a request names the sets asked for, in that order, with offsets, dtypes and shapes") {
  const Layout layout = make_layout(two_input_task(), kernels::DeviceKind::cpu, 3);
  capnp::MallocMessageBuilder message;
  auto request = message.initRoot<msg::RunRequest>();
  fill_buffer_sets(request.initSets(2), layout, {2, 0});
  auto sets = request.asReader().getSets();
  DRK_CHECK(sets[0].getInputs()[0].getOffset() == layout.sets[2].inputs[0].offset);
  DRK_CHECK(sets[1].getOutputs()[0].getOffset() == layout.sets[0].outputs[0].offset);
  auto w = sets[0].getInputs()[1];
  DRK_CHECK(w.getDtype() == static_cast<int32_t>(kernels::DType::int64));
  DRK_REQUIRE(w.getShape().size() == 1);
  DRK_CHECK(w.getShape()[0] == 5);
  DRK_CHECK(all_sets(3) == std::vector<uint32_t>{0, 1, 2});
}

DRK_TEST_CASE("the reference a sandbox runs is the task's expression over its inputs in order") {
  kernels::Task task = two_input_task();
  task.reference = "x * w";
  capnp::MallocMessageBuilder message;
  auto reference = message.initRoot<msg::ReferenceSpec>();
  fill_reference_spec(reference, task);
  DRK_CHECK(std::string(reference.getExpression().cStr()) == "x * w");
  DRK_REQUIRE(reference.getInputNames().size() == 2);
  DRK_CHECK(std::string(reference.getInputNames()[1].cStr()) == "w");
  // Each input's dtype, by which the sandbox's reference finds FP8 inputs and their scales.
  DRK_REQUIRE(reference.getInputDtypes().size() == 2);
  DRK_CHECK(reference.getInputDtypes()[0] == DRK_F32);
  task.inputs[0].dtype = kernels::DType::float8_e4m3fn;
  fill_reference_spec(reference, task);
  DRK_CHECK(reference.getInputDtypes()[0] == DRK_F8E4M3);
}
