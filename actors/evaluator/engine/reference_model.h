// ReferenceModel: what a correct candidate is judged against, in this (the Evaluator's, trusted)
// process: where a task's inputs come from and what the reference answers on them. Two kinds:
// a catalog task's LibTorch expression with inputs drawn from the task's distributions
// (ExpressionReference below), and a KernelBench problem's own Python `Model` with inputs from its
// `get_inputs()` (python/python_reference.h).
//
// Draws are deterministic in the seed: the same seed gives the same values, so that a run can
// draw a set's inputs again instead of keeping a copy (evaluation_run.h).
//
// Thread-safety: run() and the draws may be called from several threads (a Python reference
// takes the interpreter's lock). Errors: run() returns the reference's own failure (an expression
// LibTorch cannot evaluate at these shapes, a Python exception); a draw that fails once the
// reference was made is a fault (std::runtime_error): it drew at creation.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/catalog/reference.h"
#include "kernels/catalog/task.h"

namespace drk::evaluator {

class ReferenceModel {
 public:
  virtual ~ReferenceModel() = default;
  // The output on `inputs` (the task's inputs in order, on any device LibTorch has).
  virtual Result<at::Tensor> run(const std::vector<at::Tensor>& inputs) const = 0;
  // Fresh CPU tensors: `task`'s inputs at `shapes` drawn from `seed`. `task` is the one the
  // reference was made for, or a copy at other shapes (kernels::at_second_shapes).
  virtual std::vector<at::Tensor> draw(const kernels::Task& task, kernels::DeviceKind shapes, uint64_t seed) const = 0;
  // The same values into `places` (the inputs at those shapes, on whatever device they are).
  virtual void draw_into(const kernels::Task& task, kernels::DeviceKind shapes, uint64_t seed,
                         const std::vector<at::Tensor>& places) const = 0;
  // Whether run() also evaluates float64 inputs, which the precision evidence and half-precision
  // outputs are judged with.
  virtual bool runs_in_float64() const = 0;
  // How the reference departs from the inputs' own dtype, for the result's baseline line ("" when
  // it does not): known once it ran.
  virtual std::string precision_note() const { return {}; }
};

// A catalog task's reference expression.
class ExpressionReference final : public ReferenceModel {
 public:
  explicit ExpressionReference(kernels::Reference reference) : reference_(std::move(reference)) {}
  Result<at::Tensor> run(const std::vector<at::Tensor>& inputs) const override { return reference_.run(inputs); }
  std::vector<at::Tensor> draw(const kernels::Task& task, kernels::DeviceKind shapes, uint64_t seed) const override {
    return kernels::draw_inputs(task, shapes, seed);
  }
  void draw_into(const kernels::Task& task, kernels::DeviceKind shapes, uint64_t seed,
                 const std::vector<at::Tensor>& places) const override {
    kernels::draw_inputs_into(task, shapes, seed, places);
  }
  bool runs_in_float64() const override { return true; }
  std::string precision_note() const override {
    return reference_.widens_16bit() ? "16-bit inputs widened to float32 and the result rounded back (this LibTorch "
                                       "has no 16-bit CPU kernel for one of its operators)"
                                     : "";
  }

 private:
  kernels::Reference reference_;
};

}  // namespace drk::evaluator
