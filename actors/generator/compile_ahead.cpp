#include "actors/generator/compile_ahead.h"

#include <chrono>
#include <stdexcept>

#include "kernels/compile/compiled_artifact.h"
#include "runtime/log.h"

namespace drk::generator {
namespace {

// experiment.compile_ahead (default false).
bool experiment_compile_ahead(const YAML::Node& experiment) {
  if (!experiment["compile_ahead"]) return false;
  try {
    return experiment["compile_ahead"].as<bool>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error("experiment.compile_ahead must be true or false, e.g. `compile_ahead: true`");
  }
}

// experiment.eval.compile_workers (default 2), the Evaluator's key: the same pool size here.
uint32_t experiment_compile_workers(const YAML::Node& experiment) {
  const YAML::Node eval = experiment["eval"];
  const uint32_t workers = eval && eval["compile_workers"] ? eval["compile_workers"].as<uint32_t>() : 2;
  if (workers < 1) throw std::runtime_error("experiment.eval.compile_workers must be at least 1");
  return workers;
}

const char* language_name(msg::Language language) {
  switch (language) {
    case msg::Language::CUDA: return "CUDA";
    case msg::Language::PYTHON: return "KernelBench-format Python";
    default: return "C++";
  }
}

}  // namespace

CompileAhead::CompileAhead(const YAML::Node& experiment)
    : enabled_(experiment_compile_ahead(experiment)), workers_(experiment_compile_workers(experiment)) {}

std::optional<CompileAhead::Compile> CompileAhead::submit(runtime::ActorContext& context, msg::Language language,
                                                          const std::string& source) {
  compile::CompilePool* compiles = pool(context, language);
  if (!compiles) return std::nullopt;
  return compiles->submit(source);
}

bool CompileAhead::done(const Compile& compile) {
  return compile.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

bool CompileAhead::pack(runtime::ActorContext& context, msg::Language language, const Compile& compile,
                        const std::string& candidate_id, capnp::MallocMessageBuilder& out) {
  const auto& outcome = compile.get();
  compile::CompilePool* compiles = pool(context, language);
  if (!outcome || !compiles) return false;
  auto artifact = out.initRoot<msg::CompiledArtifact>();
  if (auto packed = compile::pack_artifact(compiles->compiler(), *outcome, context.self(), artifact); !packed) {
    log::warn() << context.self() << ": candidate " << candidate_id
                << " is sent without its object: " << packed.error().describe();
    return false;
  }
  if (artifact.getUse() == msg::ArtifactUse::WITHHELD)
    log::warn() << context.self() << ": candidate " << candidate_id
                << " is sent without its object: " << artifact.getNote().cStr();
  return true;
}

compile::CompilePool* CompileAhead::pool(runtime::ActorContext& context, msg::Language language) {
  if (!enabled_) return nullptr;
  if (auto found = pools_.find(language); found != pools_.end()) return found->second.get();
  compile::CompilerOptions options = compile::compiler_options_for(language);
  const std::string& run_dir = context.spec().run_dir;
  options.cache_dir = (run_dir.empty() ? std::string(".") : run_dir) + "/compile-cache";
  Error why;
  std::unique_ptr<compile::CompilePool>& made = pools_[language];
  if (auto compiler = compile::Compiler::create(options); !compiler) {
    why = compiler.error();
  } else if (auto pool = compile::CompilePool::create(std::move(*compiler), workers_); !pool) {
    why = pool.error();
  } else {
    made = std::move(*pool);
    return made.get();
  }
  log::warn() << context.self() << ": experiment.compile_ahead is on, but this node cannot compile "
              << language_name(language) << " candidates (" << why.describe() << "): the evaluators compile them";
  return nullptr;
}

}  // namespace drk::generator
