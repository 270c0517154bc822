#include "actors/evaluator/engine/compile_and_load.h"

#include <capnp/message.h>


#include "actors/evaluator/engine/candidate_staging.h"
#include "actors/evaluator/engine/triton_warm_up.h"
#include "base/file_system.h"
#include "kernels/compile/compiled_artifact.h"
#include "runtime/log.h"

namespace drk::evaluator {

CompileAndLoad::CompileAndLoad(const EngineOptions& options, compile::CompilePool& pool, SandboxSession& session,
                               EvaluationDevice& device, HostTensorStore& shared)
    : options_(options), pool_(pool), session_(session), device_(device), shared_(shared) {}

void CompileAndLoad::compile_ahead(msg::Candidate::Reader candidate) {
  if (candidate.hasCompiled()) {
    Status adoption = pool_.adopt(candidate.getSource(), candidate.getCompiled());
    adopted_.insert_or_assign(candidate.getId().cStr(), std::move(adoption));
  }
  (void)pool_.submit(candidate.getSource());
}

std::optional<Status> CompileAndLoad::take_adoption(const std::string& candidate_id) {
  auto found = adopted_.find(candidate_id);
  if (found == adopted_.end()) return std::nullopt;
  std::optional<Status> adoption = std::move(found->second);
  adopted_.erase(found);
  return adoption;
}

void CompileAndLoad::record_artifact(msg::Candidate::Reader candidate, std::optional<Status> adoption,
                                     msg::EvalResult::Builder out) {
  if (!candidate.hasCompiled()) {
    out.setCandidate(candidate);
    return;
  }
  if (!adoption) adoption = pool_.adopt(candidate.getSource(), candidate.getCompiled());
  capnp::MallocMessageBuilder copy;
  auto stripped = compile::without_object(candidate, copy);
  auto artifact = stripped.getCompiled();
  if (adoption->ok()) {
    artifact.setUse(msg::ArtifactUse::USED);
  } else if (artifact.getUse() != msg::ArtifactUse::WITHHELD) {
    artifact.setUse(msg::ArtifactUse::IGNORED);
    artifact.setNote(adoption->error().message);
    log::warn() << options_.evaluator_name << ": the object shipped with candidate " << candidate.getId().cStr()
                << " is ignored, its source is compiled: " << adoption->error().message;
  }
  out.setCandidate(stripped.asReader());
}

Result<std::optional<compile::CompiledCandidate>> CompileAndLoad::compile(const std::string& source,
                                                                          msg::EvalResult::Builder out,
                                                                          Clock::time_point started) {
  auto compiled = pool_.compile(source);
  out.setCompileWaitMs(ms_since(started));
  device_.finish_warm_up();  // in evalMs, not in the compile wait
  if (!compiled) {
    if (compiled.error().code != Errc::compile_error) return compiled.error();
    out.setCompiled(false);
    out.setCompileLog(compiled.error().message);
    out.setCompileMs(ms_since(started));
    out.setErrorText("the candidate does not compile");
    return std::optional<compile::CompiledCandidate>();
  }
  out.setCompiled(true);
  out.setCompileCached(compiled->cached);
  out.setCompileMs(compiled->compile_ms);
  return std::optional<compile::CompiledCandidate>(std::move(*compiled));
}

Result<bool> CompileAndLoad::load(EvaluationRun& run, const compile::CompiledCandidate& compiled) {
  auto out = run.out;
  const auto started = Clock::now();
  if (auto s = session_.begin_candidate(); !s) return s.error();
  device_.before_load(session_, shared_);
  auto staged = stage_candidate(compiled, [&](const std::string& path, const std::string& name) {
    return session_.stage_library(path, name);
  });
  if (!staged) return staged.error();
  if (auto warmed = warm_up_triton(run, compiled); !warmed) {
    if (warmed.error().code != Errc::invalid_argument && warmed.error().code != Errc::unsupported)
      return warmed.error();
    out.setLoadMs(ms_since(started));
    out.setSandbox(msg::SandboxOutcome::FAILED_TO_LOAD);
    out.setErrorText(warmed.error().message);
    return false;
  }
  auto loaded = session_.call(run, options_.load_timeout, [&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    device_.fill_load(run, load);
    fill_staged_load(*staged, options_.max_threads, load);
  });
  out.setLoadMs(ms_since(started));
  if (!loaded) {
    if (!run.sandbox_failed) return loaded.error();
    out.setErrorText("while loading the candidate: " + std::string(out.getErrorText().cStr()));
    return false;
  }
  if (loaded->status != msg::SandboxStatus::OK) {
    out.setSandbox(msg::SandboxOutcome::FAILED_TO_LOAD);
    out.setErrorText(loaded->message);
    return false;
  }
  return true;
}

Status CompileAndLoad::warm_up_triton(EvaluationRun& run, const compile::CompiledCandidate& compiled) {
  if (device_.language() != msg::Language::PYTHON || device_.kind() != kernels::DeviceKind::cuda) return {};
  auto source = real_file_system().read_file(compiled.library_path);
  if (!source) return source.error();
  if (!uses_triton(*source)) return {};
  const auto started = Clock::now();
  auto cache = triton_warm_up(options_, compiled, run, session_, shared_,
                              [&](msg::LoadRequest::Builder load) { device_.fill_load(run, load); });
  // Triton compiles its kernels in the warm-up: compile time.
  run.out.setCompileMs(run.out.getCompileMs() + ms_since(started));
  if (!cache) return cache.error();
  record_triton_kernels(triton_kernels(cache->path()), run);
  auto staged = session_.stage_directory(cache->path(), "triton-cache");
  if (!staged) return staged.error();
  return relocate_triton_groups(*staged);
}

}  // namespace drk::evaluator
