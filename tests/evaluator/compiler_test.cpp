// The compiler: content-hash cache, the compiler's own message on failure, timeouts through the
// command-runner seam.
#include <unistd.h>

#include <filesystem>

#include "kernels/compile/compiler.h"
#include "tests/doctest_drk.h"

namespace fs = std::filesystem;
using namespace drk::compile;

namespace {

std::string temp_cache(const char* name) {
  fs::path dir = fs::temp_directory_path() / ("drk-compiler-test-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir.string();
}

const char* kTinyCandidate = R"(#include "drk_kernel.h"
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) { return DRK_OK; }
)";

// Answers `--version` and `-Q --help=target` like a compiler, and every compile as told.
class ScriptedRunner final : public CommandRunner {
 public:
  explicit ScriptedRunner(CommandRun compile_answer) : compile_answer_(std::move(compile_answer)) {}
  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
    if (argv.size() == 2 && argv[1] == "--version") return CommandRun{0, 0, false, "scripted c++ 1.0"};
    if (argv.back() == "--help=target") return CommandRun{0, 0, false, "  -march=  scripted-cpu\n"};
    ++compiles;
    return compile_answer_;
  }
  int compiles = 0;

 private:
  CommandRun compile_answer_;
};

}  // namespace

DRK_TEST_CASE("a second compile of the same source is a cache hit") {
  std::string cache = temp_cache("hit");
  auto compiler = Compiler::create(CompilerOptions{.cache_dir = cache});
  DRK_REQUIRE(compiler.ok());
  auto first = (*compiler)->compile(kTinyCandidate);
  DRK_REQUIRE_MESSAGE(first.ok(), (first.ok() ? "" : first.error().message));
  DRK_CHECK_FALSE(first->cached);
  DRK_CHECK(fs::exists(first->library_path));
  auto second = (*compiler)->compile(kTinyCandidate);
  DRK_REQUIRE(second.ok());
  DRK_CHECK(second->cached);
  DRK_CHECK(second->library_path == first->library_path);
  auto other = (*compiler)->compile(std::string(kTinyCandidate) + "// another\n");
  DRK_REQUIRE(other.ok());
  DRK_CHECK_FALSE(other->cached);
  fs::remove_all(cache);
}

DRK_TEST_CASE("a compile error carries the compiler's message, naming candidate.cpp") {
  std::string cache = temp_cache("error");
  auto compiler = Compiler::create(CompilerOptions{.cache_dir = cache});
  DRK_REQUIRE(compiler.ok());
  auto failed = (*compiler)->compile("int drk_kernel( { return undefined_name; }\n");
  DRK_REQUIRE_FALSE(failed.ok());
  DRK_CHECK(failed.error().code == drk::Errc::compile_error);
  DRK_CHECK(failed.error().message.find("candidate.cpp:1") != std::string::npos);
  DRK_CHECK(failed.error().message.find("error") != std::string::npos);
  auto again = (*compiler)->compile("int drk_kernel( { return undefined_name; }\n");
  DRK_REQUIRE_FALSE(again.ok());
  DRK_CHECK(again.error().message == failed.error().message);
  fs::remove_all(cache);
}

DRK_TEST_CASE("a compile past its deadline is a compile_error that says so, and is not cached") {
  std::string cache = temp_cache("timeout");
  auto runner = std::make_shared<ScriptedRunner>(CommandRun{-1, 0, true, ""});
  auto compiler = Compiler::create(CompilerOptions{.cache_dir = cache}, runner);
  DRK_REQUIRE(compiler.ok());
  auto failed = (*compiler)->compile(kTinyCandidate);
  DRK_REQUIRE_FALSE(failed.ok());
  DRK_CHECK(failed.error().code == drk::Errc::compile_error);
  DRK_CHECK(failed.error().message.find("timed out") != std::string::npos);
  (void)(*compiler)->compile(kTinyCandidate);
  DRK_CHECK(runner->compiles == 2);
  fs::remove_all(cache);
}

DRK_TEST_CASE("a compiler that cannot run is an io_error, not a compile_error") {
  auto compiler = Compiler::create(CompilerOptions{.cache_dir = temp_cache("missing"), .compiler = "/nonexistent/c++"});
  DRK_REQUIRE_FALSE(compiler.ok());
  DRK_CHECK(compiler.error().code == drk::Errc::io_error);
  fs::remove_all(temp_cache("missing"));
}
