// Problem: what a renderer and the observation need to know about a task, read from the
// msg::Task a RolloutRequest carries (family, device, family parameters, tensor shapes). Shapes here
// describe the task as sent; rendered kernels still read every shape at run time from the
// tensor descriptors, so one rendered source serves every shape set of the task.
//
// Thread-safety: a plain value.
// Errors: problem_from_task returns invalid_argument for an unknown family, for tensors that do
// not share one floating dtype (a cross_entropy task's int64 class indices aside), and for a
// dtype the family's space does not render on the device (space.h, renders_precision), naming
// the task and the fix.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/schedule/space.h"
#include "messages/drk.capnp.h"
#include "base/result.h"

namespace drk::schedule {

struct TensorShape {
  std::string name;
  std::vector<int64_t> shape;
  bool class_indices = false;  // int64 class indices (cross_entropy's targets), not of the precision
  bool scale = false;          // the float32 scale of the FP8 input before it, not of the precision
};

struct Problem {
  std::string task;  // the task's name, for messages
  Family family = Family::elementwise;
  Device device = Device::cpu;  // where the task is evaluated: the space its schedules come from
  // The dtype every tensor of the task has; an FP8 precision's inputs are FP8 bytes each followed
  // by its scale (TensorShape::scale), its output bfloat16.
  Precision precision = Precision::float32;
  std::map<std::string, std::string> params;
  std::vector<TensorShape> inputs;
  std::vector<TensorShape> outputs;

  // The parameter, or not_found naming the task and the key.
  Result<std::string> param(const std::string& key) const;
  // The parameter, or `fallback` when the task does not set it.
  std::string param_or(const std::string& key, const std::string& fallback) const;
};

Result<Problem> problem_from_task(msg::Task::Reader task);

// The schedule device of a message's device.
Device device_of(msg::Device device);

// Product of the dimensions (1 for a scalar).
int64_t element_count(const std::vector<int64_t>& shape);

}  // namespace drk::schedule
