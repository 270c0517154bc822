// The RolloutRequest the Generator tests send: the relu task at a small 16 x 32 shape, as the
// Learner would fill it.
//
// Thread-safety: a pure function over the builder it is given.
#pragma once

#include <cstdint>
#include <string>

#include "messages/drk.capnp.h"

namespace drk::testing {

inline void fill_relu_rollout(msg::RolloutRequest::Builder rollout, const std::string& trajectory_id, uint32_t turns,
                              msg::Device device = msg::Device::CPU) {
  rollout.setStep(0);
  rollout.setTrajectoryId(trajectory_id);
  rollout.setTurns(turns);
  auto task = rollout.initTask();
  task.setName("relu");
  task.setFamily("elementwise");
  task.setDevice(device);
  auto input = task.initInputs(1)[0];
  input.setName("x");
  input.initShape(2).set(0, 16);
  input.getShape().set(1, 32);
  auto output = task.initOutputs(1)[0];
  output.setName("y");
  output.initShape(2).set(0, 16);
  output.getShape().set(1, 32);
  auto param = task.initParams(1)[0];
  param.setKey("stages");
  param.setValue("v > 0.0f ? v : 0.0f");
}

}  // namespace drk::testing
