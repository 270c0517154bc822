#include "actors/evaluator/engine/compile_and_load.h"

#include <capnp/message.h>

#include <filesystem>
#include <vector>

#include "kernels/compile/compiled_artifact.h"
#include "runtime/log.h"

namespace drk::evaluator {

CompileAndLoad::CompileAndLoad(const EngineOptions& options, compile::CompilePool& pool, SandboxSession& session,
                               EvaluationDevice& device, TensorStore& shared)
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
  auto staged = session_.stage_library(compiled.library_path);
  if (!staged) return staged.error();
  std::vector<compile::PrebuiltExtension> extensions;
  for (const auto& extension : compiled.extensions) {
    // Each under a name of its own; the loader only needs the module's suffix kept.
    const std::string name = "extension" + std::to_string(extensions.size()) + "_" +
                             std::filesystem::path(extension.module_path).filename().string();
    auto staged_module = session_.stage_library(extension.module_path, name);
    if (!staged_module) return staged_module.error();
    extensions.push_back({extension.name, *staged_module});
  }
  auto loaded = session_.call(run, options_.load_timeout, [&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    load.setLibrary(*staged);
    load.setMaxThreads(options_.max_threads);
    device_.fill_load(run, load);
    if (extensions.empty()) return;
    auto listed = load.getPython().initExtensions(static_cast<unsigned>(extensions.size()));
    for (unsigned i = 0; i < listed.size(); ++i) {
      listed[i].setName(extensions[i].name);
      listed[i].setPath(extensions[i].module_path);
    }
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

}  // namespace drk::evaluator
