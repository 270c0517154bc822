// ModelYaml: a small model described in YAML (docs/whole-models.md, "Models in YAML"), written out
// as a KernelBench-format Python file (a Model of torch.nn modules and torch functions,
// get_inputs(), get_init_inputs()) that `drk model split`, `drk kernelbench import` and every
// evaluation take like any KernelBench problem.
//
//   name: TinyResidual
//   inputs:                          # forward's arguments, in order, drawn by get_inputs()
//     x: {shape: [8, 64, 32, 32]}    # dtype float32|float16|bfloat16 (float32), draw randn|rand (randn)
//   modules:                         # torch.nn modules, built as nn.TYPE(*args, **kwargs)
//     conv: {type: Conv2d, args: [64, 64, 3], kwargs: {padding: 1}}
//   graph:                           # in order; each node calls a module or a torch function
//     - {name: h, module: conv, inputs: [x]}
//     - {name: y, function: relu, inputs: [h]}              # torch.relu(h)
//     - {name: out, function: add, inputs: [y, x]}          # extra args / kwargs allowed
//   output: out
//
// Thread-safety: pure functions. Errors: parse_error for YAML that does not parse;
// invalid_argument naming the file, the line and the field for anything else (an unknown field,
// a name that is not a Python identifier or is used twice, a node reading a value not yet made,
// a module that no node calls).
#pragma once

#include <string>

#include "base/result.h"

namespace drk::kernels {

struct ModelPython {
  std::string name;    // the model's name: the Python file's stem
  std::string source;  // the KernelBench-format Python file
};

// `path`: the YAML file (named in messages and in the written file's first line).
Result<ModelPython> model_python_from_yaml(const std::string& path);

}  // namespace drk::kernels
