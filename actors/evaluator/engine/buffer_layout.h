// BufferLayout: where the tensors of a task's buffer sets lie in the memory an evaluation lends
// its sandbox (the shared region, or the Evaluator's device memory), and how a sandbox request
// names them and the task's reference.
//
// A buffer set is one call's tensors: the task's inputs in their declared order, then its outputs.
// Every tensor starts on a 4096-byte boundary, sets one after another; `bytes` is the end of the
// last one.
//
// Thread-safety: plain values. Errors: none; make_layout() requires the task to have shapes for
// `device` (Task::runs_on), which the engine checks before it lays anything out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/catalog/expression.h"
#include "kernels/catalog/task.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

struct TensorSlot {
  size_t offset = 0;
  kernels::Shape shape;
  size_t elements = 1;
  kernels::DType dtype = kernels::DType::float32;
  size_t bytes() const { return elements * kernels::dtype_size(dtype); }
};

struct BufferSetLayout {
  std::vector<TensorSlot> inputs;
  std::vector<TensorSlot> outputs;
};

struct Layout {
  std::vector<BufferSetLayout> sets;
  size_t bytes = 0;
};

inline constexpr size_t kTensorAlignment = 4096;

// `sets` buffer sets of `task` at its shapes for `device`.
Layout make_layout(const kernels::Task& task, kernels::DeviceKind device, uint32_t sets);

// 0, 1, ..., count - 1: every buffer set of a layout.
std::vector<uint32_t> all_sets(uint32_t count);

// One request's buffer set: these inputs and outputs (their offsets, dtypes and shapes).
void fill_buffer_set(msg::BufferSet::Builder set, const std::vector<TensorSlot>& inputs,
                     const std::vector<TensorSlot>& outputs);

// The request's list: the layout's sets `sets`, in that order.
void fill_buffer_sets(capnp::List<msg::BufferSet>::Builder list, const Layout& layout,
                      const std::vector<uint32_t>& sets);

// The task's reference as a request to a sandbox that runs it (the CUDA sandbox's time and energy
// requests): its expression and the names of its inputs, in the buffer sets' order.
void fill_reference_spec(msg::ReferenceSpec::Builder reference, const kernels::Task& task);

}  // namespace drk::evaluator
