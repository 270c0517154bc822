// A Python candidate's load_inline calls built by its compile step: real extraction and torch
// facts (Debian's python3-torch), a scripted C++ compiler that writes its -o file (the real builds
// are torch_extension_test's and kernelbench_eval_test's). The cases that need torch's facts are
// skipped (exit 77) where that Python has no torch.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/file_system.h"
#include "base/temporary_directory.h"
#include "kernels/compile/candidate_extensions.h"
#include "tests/doctest_drk.h"
#include "tests/support/device_skip.h"

using namespace drk::compile;

namespace {

std::string python() {
  const char* chosen = std::getenv("DRK_PYTHON");
  return chosen && *chosen ? chosen : "/usr/bin/python3";
}

// Runs the Python for real; answers for the C++ compiler, writing each -o file, and counts those
// compiler runs.
class ScriptedCompilerRunner final : public CommandRunner {
 public:
  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) override {
    if (argv[0] == python()) {
      ++python_runs;
      return system_command_runner()->run(argv, timeout);
    }
    if (argv.size() == 2 && argv[1] == "--version") return CommandRun{0, 0, false, "scripted c++ 1.0"};
    ++compiler_runs;
    DRK_REQUIRE(argv.size() > 2);
    DRK_REQUIRE(argv[argv.size() - 2] == "-o");
    if (auto written = drk::write_file_atomically(drk::real_file_system(), argv.back(), "object"); !written)
      return written.error();
    return CommandRun{0, 0, false, ""};
  }
  std::atomic<int> python_runs{0};
  std::atomic<int> compiler_runs{0};
};

struct Setup {
  drk::TemporaryDirectory directory;
  std::shared_ptr<ScriptedCompilerRunner> runner = std::make_shared<ScriptedCompilerRunner>();
  CandidateExtensions extensions;

  explicit Setup(drk::TemporaryDirectory dir)
      : directory(std::move(dir)),
        extensions(python(), directory.path() + "/cache", LoadInlineOptions{}, drk::real_file_system(), runner) {}

  drk::Result<CandidateExtensions::Built> build(const std::string& source) {
    const std::string path = directory.path() + "/0123abcd.py";
    DRK_REQUIRE(drk::write_file_atomically(drk::real_file_system(), path, source));
    return extensions.build(source, path, "candidate.py");
  }
};

std::unique_ptr<Setup> setup() {
  auto dir = drk::TemporaryDirectory::create("drk-candidate-extensions-test");
  DRK_REQUIRE(dir);
  return std::make_unique<Setup>(std::move(*dir));
}

// Whether this Python has torch; when not, the case is skipped with the reason printed.
bool have_torch() {
  static const bool found = [] {
    auto facts = torch_facts(python());
    if (!facts)
      std::printf("skipped: %s has no torch (apt-get install python3-torch): %s\n", python().c_str(),
                  facts.error().message.c_str());
    return facts.ok();
  }();
  if (!found) drk::testing::skipped_for_missing_device() = true;
  return found;
}

const char* kTwoNames = R"(from torch.utils.cpp_extension import load_inline
first = load_inline(name="a_ext", cpp_sources="int twice(int x) { return 2 * x; }", functions=["twice"])
second = load_inline(name="b_ext", cpp_sources="int thrice(int x) { return 3 * x; }", functions=["thrice"])
again = load_inline(name="a_ext", cpp_sources="int twice(int x) { return 2 * x; }", functions=["twice"])
class ModelNew: pass
)";

}  // namespace

DRK_TEST_CASE("a candidate that does not mention load_inline runs no process and has no modules") {
  auto s = setup();
  auto built = s->build("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n");
  DRK_REQUIRE(built.ok());
  DRK_CHECK(built->modules.empty());
  DRK_CHECK(built->cached);
  DRK_CHECK(s->runner->python_runs == 0);
  DRK_CHECK(s->runner->compiler_runs == 0);
}

DRK_TEST_CASE("arguments that are not constants are the candidate's compile failure, in its own name") {
  auto s = setup();
  auto built = s->build(R"(from torch.utils.cpp_extension import load_inline
def source():
    return "int f() { return 1; }"
ext = load_inline(name="f_ext", cpp_sources=source(), functions=["f"])
)");
  DRK_REQUIRE_FALSE(built.ok());
  DRK_CHECK(built.error().code == drk::Errc::compile_error);
  const std::string& message = built.error().message;
  DRK_CHECK_MESSAGE(message.find("candidate.py:4: argument cpp_sources") != std::string::npos, message);
  DRK_CHECK_MESSAGE(message.find("0123abcd") == std::string::npos, message);
}

DRK_TEST_CASE("modules come in source order, one per call; a name called twice alike shares its module") {
  if (!have_torch()) return;
  auto s = setup();
  auto built = s->build(kTwoNames);
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_REQUIRE(built->modules.size() == 3);
  DRK_CHECK(built->modules[0].name == "a_ext");
  DRK_CHECK(built->modules[1].name == "b_ext");
  DRK_CHECK(built->modules[2].name == "a_ext");
  DRK_CHECK(built->modules[0].module_path == built->modules[2].module_path);
  DRK_CHECK(built->modules[0].module_path != built->modules[1].module_path);
  DRK_CHECK_FALSE(built->cached);
  const int compiler_runs = s->runner->compiler_runs;

  auto again = s->build(kTwoNames);
  DRK_REQUIRE(again.ok());
  DRK_CHECK(again->cached);
  DRK_CHECK(again->modules[1].module_path == built->modules[1].module_path);
  DRK_CHECK(s->runner->compiler_runs == compiler_runs);
}

DRK_TEST_CASE("one name for two different extensions is a compile failure naming both lines") {
  if (!have_torch()) return;
  auto s = setup();
  auto built = s->build(R"(from torch.utils.cpp_extension import load_inline
first = load_inline(name="a_ext", cpp_sources="int twice(int x) { return 2 * x; }", functions=["twice"])
other = load_inline(name="a_ext", cpp_sources="int thrice(int x) { return 3 * x; }", functions=["thrice"])
)");
  DRK_REQUIRE_FALSE(built.ok());
  DRK_CHECK(built.error().code == drk::Errc::compile_error);
  DRK_CHECK_MESSAGE(built.error().message.find("candidate.py:3: load_inline(name='a_ext') builds another extension "
                                               "than the call of line 2") != std::string::npos,
                    built.error().message);
}

DRK_TEST_CASE("a refused flag is a compile failure naming it, before anything is compiled") {
  if (!have_torch()) return;
  auto s = setup();
  auto built = s->build(R"(from torch.utils.cpp_extension import load_inline
ext = load_inline(name="a_ext", cpp_sources="int f() { return 1; }", functions=["f"], extra_cflags=["-B/tmp/tools"])
)");
  DRK_REQUIRE_FALSE(built.ok());
  DRK_CHECK(built.error().code == drk::Errc::compile_error);
  DRK_CHECK_MESSAGE(built.error().message.find("'-B/tmp/tools'") != std::string::npos, built.error().message);
  DRK_CHECK(s->runner->compiler_runs == 0);
}
