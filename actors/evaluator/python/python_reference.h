// PythonReference: a KernelBench problem's own reference, run in the Evaluator's process (trusted,
// out of every candidate's reach) by the embedded interpreter (python_runtime.h). As KernelBench
// does: torch seeded, `init = get_init_inputs()`, seeded again, `Model(*init)` without autograd
// (on the CUDA device for cuda), and per trial `get_inputs()` under that trial's seed. Here the
// trial's seed is the run's secret seed, fresh per trial, not KernelBench's fixed 42. On cuda,
// get_inputs() runs with the device as torch's default (`with torch.device("cuda")`): the same
// distributions from CUDA's generator, a millisecond where the host takes seconds for the
// published shapes (KernelBench draws on the host and copies).
//
// `get_inputs()`'s tensors are the task's inputs (kernels::kernelbench_task(): input1, input2, ...);
// its other values (a scale factor) are constants, passed at their positions on every call, by the
// sandbox too (constants_json()).
//
// Thread-safety: as ReferenceModel's (each call takes the interpreter's lock; create() and draw()
// also hold torch's generators, from the seed to the last draw). Errors: create()
// returns invalid_argument with Python's message and the stage that failed (the problem file
// raises, get_init_inputs, Model(...), get_inputs, forward) and unsupported for what a sandbox
// cannot be given (init inputs that are not plain values).
#pragma once

#include <memory>
#include <string>

#include "actors/evaluator/engine/reference_model.h"
#include "actors/evaluator/python/python_runtime.h"
#include "actors/evaluator/python/python_tensors.h"

namespace drk::evaluator {

class PythonReference final : public ReferenceModel {
 public:
  // `source`: the problem file's text; `display_name` names it in messages. The reference draws
  // once and runs once here, so that a problem that cannot run says so now.
  static Result<std::unique_ptr<PythonReference>> create(const std::string& source, const std::string& display_name,
                                                        kernels::DeviceKind device, uint64_t init_seed);
  ~PythonReference() override;

  Result<at::Tensor> run(const std::vector<at::Tensor>& inputs) const override;
  std::vector<at::Tensor> draw(const kernels::Task& task, kernels::DeviceKind shapes, uint64_t seed) const override;
  void draw_into(const kernels::Task& task, kernels::DeviceKind shapes, uint64_t seed,
                 const std::vector<at::Tensor>& places) const override;
  // Float64 inputs run a copy of Model whose parameters and buffers are float64 (copy.deepcopy,
  // then .double()), made at creation; a Model that cannot be copied so has none, and then no
  // float64 run: no precision evidence, and half outputs judged against Model itself.
  bool runs_in_float64() const override { return static_cast<bool>(model_float64_); }

  const std::string& init_inputs_json() const { return init_inputs_json_; }
  const std::string& constants_json() const { return constants_json_; }
  uint64_t init_seed() const { return init_seed_; }
  // The problem file's text.
  const std::string& source() const { return source_; }
  // Model's parameters (python_runtime.h's parameter_summary()).
  const std::string& parameters_json() const { return parameters_json_; }

 private:
  PythonReference() = default;
  // get_inputs(), on the device for cuda; null with Python's error set when it raises.
  PyRef call_get_inputs() const;
  // get_inputs()'s tensors under `seed`, dense, where they were drawn.
  Result<std::vector<at::Tensor>> draw_tensors(uint64_t seed) const;
  // draw_tensors() under the generators' and the interpreter's locks; throws as draw() does.
  std::vector<at::Tensor> drawn(uint64_t seed) const;

  PyRef module_, model_, model_float64_;
  PyRef draw_on_device_;  // cuda: kDrawOnDevice's draw(get_inputs)
  std::vector<ForwardConstant> constants_;
  size_t argument_count_ = 0;
  std::string display_name_;
  std::string source_;
  std::string init_inputs_json_, constants_json_, parameters_json_;
  uint64_t init_seed_ = 0;
  bool on_cuda_ = false;
};

}  // namespace drk::evaluator
