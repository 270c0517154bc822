// What the evaluation tests share: the source of a hand-written candidate (tests/candidates),
// and one EvaluationEngine per test program (a sandbox start loads LibTorch, the slow part),
// whose compile cache lives in a temporary directory removed at exit.
//
// Thread-safety: one test thread. Errors: an engine that cannot be created throws (a fault of
// the test set-up, reported by doctest).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "actors/evaluator/evaluation.h"

namespace drk::testing {

// tests/candidates/RELATIVE of the source tree ($DRK_SOURCE_DIR, else the current directory).
inline std::string candidate_source(const std::string& relative) {
  const char* dir = std::getenv("DRK_SOURCE_DIR");
  const std::string path = std::string(dir ? dir : ".") + "/tests/candidates/" + relative;
  std::ifstream in(path);
  DRK_REQUIRE_MESSAGE(in.is_open(), (std::string("cannot read ") + path +
                                     ": run the test from the source tree or set DRK_SOURCE_DIR (ctest sets it)"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class TestEngine {
 public:
  // `label` names the cache directory; `options.cache_dir` is set here.
  TestEngine(const std::string& label, evaluator::EngineOptions options)
      : cache_(std::filesystem::temp_directory_path() / ("drk-" + label + "-" + std::to_string(::getpid()))) {
    auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
    if (!catalog) throw std::runtime_error(catalog.error().message);
    options.cache_dir = cache_.string();
    auto created = evaluator::EvaluationEngine::create(std::move(*catalog), options);
    if (!created) throw std::runtime_error(created.error().message);
    engine_ = std::move(*created);
  }
  ~TestEngine() {
    engine_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(cache_, ignored);
  }
  TestEngine(const TestEngine&) = delete;
  TestEngine& operator=(const TestEngine&) = delete;

  evaluator::EvaluationEngine& operator*() { return *engine_; }
  evaluator::EvaluationEngine* operator->() { return engine_.get(); }

 private:
  std::filesystem::path cache_;
  std::unique_ptr<evaluator::EvaluationEngine> engine_;
};

}  // namespace drk::testing
