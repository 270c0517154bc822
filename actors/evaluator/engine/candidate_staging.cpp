#include "actors/evaluator/engine/candidate_staging.h"

#include <filesystem>

namespace drk::evaluator {

Result<StagedCandidate> stage_candidate(const compile::CompiledCandidate& compiled, const StageFile& stage) {
  StagedCandidate staged;
  auto library = stage(compiled.library_path, "candidate.so");
  if (!library) return library.error();
  staged.library = std::move(*library);
  for (const auto& extension : compiled.extensions) {
    const std::string name = "extension" + std::to_string(staged.extensions.size()) + "_" +
                             std::filesystem::path(extension.module_path).filename().string();
    auto module = stage(extension.module_path, name);
    if (!module) return module.error();
    staged.extensions.push_back({extension.name, std::move(*module)});
  }
  return staged;
}

void fill_staged_load(const StagedCandidate& staged, int max_threads, msg::LoadRequest::Builder load) {
  load.setLibrary(staged.library);
  load.setMaxThreads(max_threads);
  if (staged.extensions.empty()) return;
  auto listed = load.getPython().initExtensions(static_cast<unsigned>(staged.extensions.size()));
  for (unsigned i = 0; i < listed.size(); ++i) {
    listed[i].setName(staged.extensions[i].name);
    listed[i].setPath(staged.extensions[i].module_path);
  }
}

}  // namespace drk::evaluator
