// The sandbox protocol's additions for the CUDA sandbox, as the CPU sandbox (drk-sandbox) answers
// them, so that they run everywhere: the device-memory-limit option reaches the sandbox without
// breaking it, tensor views of every drk_dtype are accepted and unknown ones refused, and an
// energy request is refused with the reason (energy is for drk-sandbox-cuda).
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <string>

#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/sandbox_process.h"
#include "actors/evaluator/shared_region.h"
#include "drk_kernel.h"
#include "messages/sandbox.capnp.h"
#include "tests/doctest_drk.h"

using namespace drk::evaluator;

namespace {

struct Answer {
  drk::msg::SandboxStatus status = drk::msg::SandboxStatus::OK;
  std::string message;
  uint64_t device_memory_bytes = 0;
  bool has_energy = false;
};

template <typename Fill>
Answer ask(SandboxProcess& sandbox, const SharedRegion& region, Fill fill) {
  capnp::MallocMessageBuilder message;
  auto request = message.initRoot<drk::msg::SandboxRequest>();
  request.setId(7);
  request.setRegionBytes(region.size());
  fill(request);
  auto words = sandbox.call(message, std::chrono::milliseconds(10000));
  DRK_REQUIRE_MESSAGE(words.ok(), words.error().describe());
  capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
  auto reply = reader.getRoot<drk::msg::SandboxReply>();
  DRK_CHECK(reply.getId() == 7);
  return {reply.getStatus(), reply.getMessage(), reply.getDeviceMemoryBytes(), reply.hasEnergy()};
}

void view(drk::msg::TensorView::Builder out, uint64_t offset, int32_t dtype) {
  out.setOffset(offset);
  out.setDtype(dtype);
  auto shape = out.initShape(2);
  shape.set(0, 4);
  shape.set(1, 8);
}

}  // namespace

DRK_TEST_CASE("the CPU sandbox takes the device-memory-limit option, every drk_dtype, and refuses energy requests") {
  auto region = SharedRegion::create(1 << 20);
  DRK_REQUIRE(region.ok());
  SandboxOptions options;
  options.gpu_memory_limit_bytes = uint64_t{512} << 20;  // ignored by the CPU sandbox, must not break it
  auto sandbox = SandboxProcess::start(options, region->fd());
  DRK_REQUIRE_MESSAGE(sandbox.ok(), sandbox.error().describe());

  for (int32_t dtype : {DRK_F32, DRK_F16, DRK_BF16, DRK_F64, DRK_I32, DRK_I64, DRK_F8E4M3, DRK_F8E5M2}) {
    DRK_INFO("dtype " << dtype);
    auto answer = ask(**sandbox, *region, [&](drk::msg::SandboxRequest::Builder request) {
      auto run = request.initRun();
      run.setCalls(0);
      auto set = run.initSets(1)[0];
      view(set.initInputs(1)[0], 0, dtype);
      view(set.initOutputs(1)[0], 4096, DRK_F32);
    });
    DRK_CHECK_MESSAGE(answer.status == drk::msg::SandboxStatus::OK, answer.message);
    DRK_CHECK(answer.device_memory_bytes == 0);
  }
  auto unknown = ask(**sandbox, *region, [&](drk::msg::SandboxRequest::Builder request) {
    auto run = request.initRun();
    run.setCalls(0);
    view(run.initSets(1)[0].initInputs(1)[0], 0, 42);
  });
  DRK_CHECK(unknown.status == drk::msg::SandboxStatus::BAD_REQUEST);
  DRK_CHECK_MESSAGE(unknown.message.find("dtype") != std::string::npos, unknown.message);

  auto energy = ask(**sandbox, *region, [&](drk::msg::SandboxRequest::Builder request) {
    auto energy_request = request.initEnergy();
    view(energy_request.initSets(1)[0].initInputs(1)[0], 0, DRK_F32);
    energy_request.setMinMs(10);
  });
  DRK_CHECK(energy.status == drk::msg::SandboxStatus::BAD_REQUEST);
  DRK_CHECK_MESSAGE(energy.message.find("drk-sandbox-cuda") != std::string::npos, energy.message);
  DRK_CHECK_FALSE(energy.has_energy);
  DRK_CHECK((*sandbox)->alive());
}
