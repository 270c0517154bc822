// CompileAhead: a Generator compiling its candidates where it runs (experiment.compile_ahead,
// docs/topology.md), so that each candidate travels with its object and an Evaluator on a GPU
// node does not compile it (kernels/compile/compiled_artifact.h): C++ and CUDA objects, and a
// KernelBench-format Python candidate's checked source with its load_inline modules.
//
// One compile pool per candidate language, made at the first candidate of that language with the
// Evaluator's options (compiler_options_for: the same cache keys) over RUN_DIR/compile-cache, of
// experiment.eval.compile_workers threads. A node that cannot compile a language (no nvcc, no
// Python with torch) says so once, in a warning, and sends those candidates uncompiled: the
// Evaluator compiles them.
//
// Thread-safety: used by one actor's thread; the compiles run on the pools' threads. Errors: the
// experiment's keys, at construction (std::runtime_error naming the key and the fix, as an actor's
// spec errors are reported).
#pragma once

#include <capnp/message.h>
#include <yaml-cpp/yaml.h>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "kernels/compile/compile_pool.h"
#include "messages/drk.capnp.h"
#include "runtime/actor.h"

namespace drk::generator {

class CompileAhead {
 public:
  using Compile = std::shared_future<compile::CompilePool::Outcome>;

  explicit CompileAhead(const YAML::Node& experiment);

  // The compile of `source`; nothing when compile_ahead is off or this node cannot compile
  // `language` (the candidate then goes uncompiled).
  std::optional<Compile> submit(runtime::ActorContext& context, msg::Language language, const std::string& source);

  // Whether `compile` is done, without waiting.
  static bool done(const Compile& compile);

  // The artifact of a done `compile` into `out`; false when there is none to ship (the compile
  // failed: the Evaluator compiles and reports it). A withheld object (too large) is shipped as
  // withheld, with a warning naming `candidate_id`.
  bool pack(runtime::ActorContext& context, msg::Language language, const Compile& compile,
            const std::string& candidate_id, capnp::MallocMessageBuilder& out);

 private:
  compile::CompilePool* pool(runtime::ActorContext& context, msg::Language language);

  bool enabled_;
  uint32_t workers_;
  std::map<msg::Language, std::unique_ptr<compile::CompilePool>> pools_;  // null: this node cannot
};

}  // namespace drk::generator
