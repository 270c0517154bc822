#include "actors/evaluator/engine/separate_call.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/evaluator/engine/buffer_layout.h"
#include "actors/evaluator/engine/candidate_staging.h"
#include "actors/evaluator/sandbox_channel.h"

namespace drk::evaluator {

std::optional<SeparateCallOutcome> call_separately(const SeparateCallSpec& spec, const compile::CompiledCandidate& compiled,
                                                   EvaluationRun& run, SandboxSession& session,
                                                   HostTensorStore& shared, std::string& note) {
  // Its tensors in the shared region (in allocations of their own when the sandbox copies them
  // there): one set.
  EvaluationRun host = run;
  host.store = &shared;
  host.lay_out(make_layout(*run.task, run.shapes, 1));
  if (auto s = host.reserve(host.layout.bytes); !s) {
    note = "no shared memory for the separate call: " + s.error().message;
    return std::nullopt;
  }
  auto process = SandboxProcess::start(spec.sandbox, shared.region().fd());
  if (!process) {
    note = "its sandbox did not start: " + process.error().message;
    return std::nullopt;
  }
  auto staged = stage_candidate(compiled, [&](const std::string& path, const std::string& name) {
    return (*process)->stage_library(path, name);
  });
  if (!staged) {
    note = staged.error().message;
    return std::nullopt;
  }
  host.write_inputs(0, spec.input_seed);
  host.poison_outputs(0);
  SeparateCallOutcome call;
  auto send = [&](const std::function<void(msg::SandboxRequest::Builder)>& fill) {
    capnp::MallocMessageBuilder message;
    session.build_request(message, host, fill);
    auto words = (*process)->call(message, spec.timeout);
    if (!words) {
      call.failure = words.error().message;
      return false;
    }
    capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
    auto reply = reader.getRoot<msg::SandboxReply>();
    if (reply.getStatus() != msg::SandboxStatus::OK && reply.getStatus() != msg::SandboxStatus::CUDA_ERROR) {
      call.failure = reply.getMessage().cStr();
      return false;
    }
    return true;
  };
  call.ran = send([&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    if (spec.fill_load) spec.fill_load(load);
    fill_staged_load(*staged, spec.max_threads, load);
  }) && send([&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(1);
    fill_buffer_sets(run_request.initSets(1), host.layout, {0});
  });
  call.output = (*process)->finish(std::chrono::milliseconds(30000));
  call.exit = (*process)->exit();
  if (spec.after_call) spec.after_call((*process)->working_directory());
  return call;
}

}  // namespace drk::evaluator
