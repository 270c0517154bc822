// cached_torch_facts() with a scripted Python (no torch needed): torch is asked once per
// fingerprint, a changed fingerprint asks again, a damaged copy is replaced, a Python without torch
// gets torch_facts()'s error, and a disk that refuses the copy costs nothing but the next ask.
#include <filesystem>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/json_text.h"
#include "base/temporary_directory.h"
#include "kernels/compile/torch_facts_cache.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"

using namespace drk::compile;

namespace {

// Answers the extractor's --torch-fingerprint and --torch-facts runs (argv: python, script,
// argument, out.json) as a Python whose torch reports `version`, counting each kind of run.
class ScriptedPython final : public CommandRunner {
 public:
  std::string fingerprint = "python 3.11\ntorch/__init__.py 39532 1678814497";
  std::string version = "2.11.0";
  bool has_torch = true;
  int fingerprint_runs = 0;
  int facts_runs = 0;

  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
    DRK_REQUIRE(argv.size() == 4);
    std::string json;
    if (argv[2] == "--torch-fingerprint") {
      ++fingerprint_runs;
      json = drk::Json{{"fingerprint", has_torch ? fingerprint : ""}}.dump();
    } else {
      DRK_REQUIRE(argv[2] == "--torch-facts");
      ++facts_runs;
      if (!has_torch) return CommandRun{1, 0, false, "ModuleNotFoundError: No module named 'torch'"};
      json = drk::Json{{"version", version},
                       {"cuda_version", "13.0"},
                       {"cuda_home", "/usr/local/cuda"},
                       {"include_paths", {"/torch/include"}},
                       {"cuda_include_paths", {"/usr/local/cuda/include"}},
                       {"library_paths", {"/torch/lib"}},
                       {"cuda_library_paths", {"/usr/local/cuda/lib64"}},
                       {"python_include", "/usr/include/python3.11"},
                       {"extension_suffix", ".cpython-311-x86_64-linux-gnu.so"},
                       {"cxx_standard", "c++17"},
                       {"cxx11_abi", 1},
                       {"passes_cxx11_abi", false},
                       {"pybind11_defines", drk::Json::object()}}
                 .dump();
    }
    if (auto written = drk::write_file_atomically(drk::real_file_system(), argv[3], json); !written)
      return written.error();
    return CommandRun{0, 0, false, ""};
  }
};

struct Setup {
  drk::TemporaryDirectory directory = [] {
    auto made = drk::TemporaryDirectory::create("drk-torch-facts-cache-test");
    DRK_REQUIRE(made);
    return std::move(*made);
  }();
  std::shared_ptr<ScriptedPython> python = std::make_shared<ScriptedPython>();
  std::string cache_dir() const { return directory.path() + "/cache"; }

  drk::Result<TorchFacts> facts(drk::FileSystem& files = drk::real_file_system()) {
    return cached_torch_facts("python3", cache_dir(), files, python);
  }
};

// The one file the cache holds.
std::string filed_copy(const Setup& setup) {
  std::vector<std::string> copies;
  for (const auto& entry : std::filesystem::directory_iterator(setup.cache_dir() + "/torch-facts"))
    copies.push_back(entry.path().string());
  DRK_REQUIRE(copies.size() == 1);
  return copies.front();
}

}  // namespace

DRK_TEST_CASE("torch is asked once per fingerprint; later processes read the filed facts") {
  Setup s;
  auto first = s.facts();
  DRK_REQUIRE(first.ok());
  DRK_CHECK(first->version == "2.11.0");
  DRK_CHECK(s.python->facts_runs == 1);
  auto again = s.facts();
  DRK_REQUIRE(again.ok());
  DRK_CHECK(s.python->facts_runs == 1);
  DRK_CHECK(s.python->fingerprint_runs == 2);
  // The same text, so the build cache's keys (which cover TorchFacts::text) are the same.
  DRK_CHECK(again->text == first->text);
  DRK_CHECK(again->cuda_home == "/usr/local/cuda");
  DRK_CHECK(again->include_paths == first->include_paths);
  DRK_CHECK_FALSE(again->passes_cxx11_abi);
}

DRK_TEST_CASE("a torch upgraded (another fingerprint) is asked again") {
  Setup s;
  DRK_REQUIRE(s.facts().ok());
  s.python->fingerprint = "python 3.11\ntorch/__init__.py 40001 1700000000";
  s.python->version = "2.12.0";
  auto upgraded = s.facts();
  DRK_REQUIRE(upgraded.ok());
  DRK_CHECK(upgraded->version == "2.12.0");
  DRK_CHECK(s.python->facts_runs == 2);
  DRK_CHECK(s.facts()->version == "2.12.0");
  DRK_CHECK(s.python->facts_runs == 2);
}

DRK_TEST_CASE("a damaged copy is asked again and replaced") {
  Setup s;
  DRK_REQUIRE(s.facts().ok());
  const std::string copy = filed_copy(s);
  for (const std::string damage : {"{\"version\": \"2.11.0\"", "{\"version\": \"2.11.0\"}", ""}) {
    DRK_INFO("the copy holds: " << damage);
    DRK_REQUIRE(drk::write_file_atomically(drk::real_file_system(), copy, damage));
    const int runs = s.python->facts_runs;
    auto facts = s.facts();
    DRK_REQUIRE(facts.ok());
    DRK_CHECK(facts->version == "2.11.0");
    DRK_CHECK(s.python->facts_runs == runs + 1);
    DRK_CHECK(*drk::real_file_system().read_file(copy) == facts->text);
  }
}

DRK_TEST_CASE("a Python without torch gets torch_facts()'s error, and nothing is filed") {
  Setup s;
  s.python->has_torch = false;
  auto facts = s.facts();
  DRK_REQUIRE_FALSE(facts.ok());
  DRK_CHECK(facts.error().code == drk::Errc::io_error);
  DRK_CHECK(facts.error().message.find("No module named 'torch'") != std::string::npos);
  DRK_CHECK_FALSE(std::filesystem::exists(s.cache_dir() + "/torch-facts"));
}

DRK_TEST_CASE("a disk that refuses the copy still gives the facts; the next process asks torch again") {
  for (const auto fault : drk::testing::kEveryFileFault) {
    DRK_INFO(drk::testing::fault_name(fault));
    Setup s;
    drk::testing::FaultInjectingFileSystem failing;
    failing.inject(fault);
    auto facts = s.facts(failing);
    DRK_REQUIRE(facts.ok());
    DRK_CHECK(facts->version == "2.11.0");
    failing.clear();
    DRK_REQUIRE(s.facts(failing).ok());
    DRK_CHECK(s.python->facts_runs == 2);
    DRK_REQUIRE(s.facts(failing).ok());
    DRK_CHECK(s.python->facts_runs == 2);
  }
}
