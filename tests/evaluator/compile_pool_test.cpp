// The compile pool: identical in-flight sources compiled once, at most N compiles at a time,
// compile errors answered as compile_error (and from the cache the second time), one cache
// directory shared by pools; and compiling ahead of an evaluation.
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "kernels/compile/compile_pool.h"
#include "actors/evaluator/evaluation.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using namespace drk::compile;
using namespace drk::evaluator;

namespace {

const char* kTinyCandidate = R"(#include "drk_kernel.h"
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) { return DRK_OK; }
)";

// Answers `--version` and `-Q --help=target` like a compiler; every compile waits until open()
// (or until `hold_until` compiles run at once, so a test can see them together), then writes its
// output file.
class GatedRunner final : public CommandRunner {
 public:
  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
    if (argv.size() == 2 && argv[1] == "--version") return CommandRun{0, 0, false, "gated c++ 1.0"};
    if (argv.back() == "--help=target") return CommandRun{0, 0, false, "  -march=  gated-cpu\n"};
    std::unique_lock lock(mutex_);
    ++compiles_;
    ++running_;
    peak_ = std::max(peak_, running_);
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    --running_;
    if (fail_) return CommandRun{1, 0, false, "candidate.cpp:1:1: error: boom"};
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == "-o") std::ofstream(argv[i + 1]) << "object";
    return CommandRun{0, 0, false, ""};
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void wait_until_running(int count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return running_ >= count; });
  }
  int compiles() {
    std::lock_guard lock(mutex_);
    return compiles_;
  }
  int peak() {
    std::lock_guard lock(mutex_);
    return peak_;
  }
  void fail_compiles() { fail_ = true; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  bool fail_ = false;
  int compiles_ = 0, running_ = 0, peak_ = 0;
};

std::unique_ptr<CompilePool> make_pool(const std::string& cache, std::shared_ptr<CommandRunner> runner, size_t workers) {
  auto compiler = Compiler::create(CompilerOptions{.cache_dir = cache}, std::move(runner));
  DRK_REQUIRE(compiler.ok());
  auto pool = CompilePool::create(std::move(*compiler), workers);
  DRK_REQUIRE(pool.ok());
  return std::move(*pool);
}

}  // namespace

DRK_TEST_CASE("a source submitted while the same source compiles is compiled once") {
  drk::testing::RunDir dir;
  auto runner = std::make_shared<GatedRunner>();
  auto pool = make_pool(dir.file("cache"), runner, 2);
  auto first = pool->submit(kTinyCandidate);
  runner->wait_until_running(1);
  auto second = pool->submit(kTinyCandidate);
  runner->open();
  DRK_REQUIRE(first.get().ok());
  DRK_REQUIRE(second.get().ok());
  DRK_CHECK(first.get()->library_path == second.get()->library_path);
  DRK_CHECK(runner->compiles() == 1);
  DRK_CHECK(pool->stats().submitted == 2);
  DRK_CHECK(pool->stats().deduplicated == 1);
  // Finished compiles are the disk cache's: a third submit is a hit, not a compile.
  auto third = pool->compile(kTinyCandidate);
  DRK_REQUIRE(third.ok());
  DRK_CHECK(third->cached);
  DRK_CHECK(runner->compiles() == 1);
}

DRK_TEST_CASE("at most N compiles run at once") {
  drk::testing::RunDir dir;
  auto runner = std::make_shared<GatedRunner>();
  auto pool = make_pool(dir.file("cache"), runner, 2);
  DRK_CHECK(pool->workers() == 2);
  std::vector<std::shared_future<CompilePool::Outcome>> outcomes;
  for (int i = 0; i < 6; ++i) outcomes.push_back(pool->submit(std::string(kTinyCandidate) + "// " + std::to_string(i)));
  runner->wait_until_running(2);
  runner->open();
  for (auto& outcome : outcomes) DRK_CHECK(outcome.get().ok());
  DRK_CHECK(runner->compiles() == 6);
  DRK_CHECK(runner->peak() == 2);
  DRK_CHECK(pool->stats().peak_running == 2);
  DRK_CHECK(pool->stats().compiled == 6);
}

DRK_TEST_CASE("a candidate that does not compile is a compile_error, answered from the cache next time") {
  drk::testing::RunDir dir;
  auto runner = std::make_shared<GatedRunner>();
  runner->fail_compiles();
  runner->open();
  auto pool = make_pool(dir.file("cache"), runner, 2);
  auto failed = pool->compile(kTinyCandidate);
  DRK_REQUIRE_FALSE(failed.ok());
  DRK_CHECK(failed.error().code == drk::Errc::compile_error);
  DRK_CHECK(failed.error().message.find("boom") != std::string::npos);
  auto again = pool->compile(kTinyCandidate);
  DRK_REQUIRE_FALSE(again.ok());
  DRK_CHECK(again.error().code == drk::Errc::compile_error);
  DRK_CHECK(runner->compiles() == 1);
}

DRK_TEST_CASE("pools over one cache directory share its objects") {
  drk::testing::RunDir dir;
  auto first_runner = std::make_shared<GatedRunner>();
  first_runner->open();
  auto second_runner = std::make_shared<GatedRunner>();
  second_runner->open();
  auto first = make_pool(dir.file("cache"), first_runner, 1);
  auto second = make_pool(dir.file("cache"), second_runner, 3);
  auto compiled = first->compile(kTinyCandidate);
  DRK_REQUIRE(compiled.ok());
  DRK_CHECK_FALSE(compiled->cached);
  auto shared = second->compile(kTinyCandidate);
  DRK_REQUIRE(shared.ok());
  DRK_CHECK(shared->cached);
  DRK_CHECK(shared->library_path == compiled->library_path);
  DRK_CHECK(second_runner->compiles() == 0);
}

DRK_TEST_CASE("a pool needs a worker") {
  drk::testing::RunDir dir;
  auto compiler = Compiler::create(CompilerOptions{.cache_dir = dir.file("cache")}, std::make_shared<GatedRunner>());
  DRK_REQUIRE(compiler.ok());
  auto pool = CompilePool::create(std::move(*compiler), 0);
  DRK_REQUIRE_FALSE(pool.ok());
  DRK_CHECK(pool.error().code == drk::Errc::invalid_argument);
}

DRK_TEST_CASE("an evaluation finds the compile it was given ahead of time, and reports its phases") {
  drk::testing::RunDir dir;
  auto catalog = drk::kernels::TaskCatalog::load(drk::kernels::TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  EngineOptions options;
  options.seed = 7;
  options.trials = 1;
  options.timing_budget_ms = 5;
  options.cache_dir = dir.file("cache");
  auto engine = EvaluationEngine::create(std::move(*catalog), options);
  DRK_REQUIRE(engine.ok());
  const char* source_dir = std::getenv("DRK_SOURCE_DIR");
  std::ifstream in(std::string(source_dir ? source_dir : ".") + "/tests/candidates/relu.cpp");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  DRK_REQUIRE_FALSE(source.empty());
  auto ahead = (*engine)->compile_pool().submit(source);
  DRK_REQUIRE(ahead.get().ok());
  capnp::MallocMessageBuilder message;
  auto result = message.initRoot<drk::msg::EvalResult>();
  DRK_REQUIRE((*engine)->evaluate(CandidateInput{"ahead/relu", "relu", drk::kernels::DeviceKind::cpu, source}, result).ok());
  DRK_CHECK(result.getCompiled());
  DRK_CHECK(result.getCompileCached());
  DRK_CHECK(result.getCorrect());
  DRK_CHECK(result.getLoadMs() > 0);
  DRK_CHECK(result.getCorrectnessMs() > 0);
  DRK_CHECK(result.getTimingMs() > 0);
  DRK_CHECK(result.getCompileWaitMs() + result.getLoadMs() + result.getCorrectnessMs() + result.getTimingMs() <=
            result.getEvalMs() + 1e-6);
  DRK_CHECK((*engine)->compile_pool().stats().submitted == 2);
}
