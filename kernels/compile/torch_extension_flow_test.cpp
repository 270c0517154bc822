// TorchExtensionBuilder's choices, with scripted compilers (no torch, no nvcc): which units are
// compiled with which headers, in what order, and what reaches the build's output. The real
// compilers' side is torch_extension_test.cpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/temporary_directory.h"
#include "kernels/compile/cuda_source_split.h"
#include "kernels/compile/torch_extension.h"
#include "tests/doctest_drk.h"

using namespace drk::compile;

namespace {

bool has(const std::vector<std::string>& argv, const std::string& part) {
  return std::find(argv.begin(), argv.end(), part) != argv.end();
}

// The unit a compile command compiles (the argument after -c), or "" for another command.
std::string compiled_unit(const std::vector<std::string>& argv) {
  auto c = std::find(argv.begin(), argv.end(), "-c");
  return c != argv.end() && c + 1 != argv.end() ? *(c + 1) : "";
}

// Compilers that succeed (writing what -o names) unless `fails` says otherwise for a unit, with
// what `fails` returns as their output. Precompiled headers' builds wait until `parallel_headers`
// of them are running at once, or 3 s: the most that ran at once is kept.
class ScriptedCompilers final : public CommandRunner {
 public:
  std::function<std::string(const std::string& unit)> fails = [](const std::string&) { return std::string(); };
  int parallel_headers = 1;

  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
    if (argv.size() == 2 && argv[1] == "--version") return CommandRun{0, 0, false, argv[0] + " 1.0"};
    {
      std::lock_guard lock(mutex_);
      commands.push_back(argv);
    }
    if (has(argv, "c++-header")) {
      std::unique_lock lock(mutex_);
      ++headers_running_;
      most_headers_at_once = std::max(most_headers_at_once, headers_running_);
      changed_.notify_all();
      changed_.wait_for(lock, std::chrono::seconds(3), [&] { return most_headers_at_once >= parallel_headers; });
    }
    const std::string failure = fails(compiled_unit(argv));
    if (has(argv, "c++-header")) {
      std::lock_guard lock(mutex_);
      --headers_running_;
    }
    if (!failure.empty()) return CommandRun{1, 0, false, failure};
    auto out = std::find(argv.begin(), argv.end(), "-o");
    DRK_REQUIRE(out + 1 != argv.end());
    if (auto written = drk::write_file_atomically(drk::real_file_system(), *(out + 1), "output"); !written)
      return written.error();
    return CommandRun{0, 0, false, "ok: " + compiled_unit(argv) + "\n"};
  }

  // The compile commands of units whose path ends with `suffix`, in order.
  std::vector<std::vector<std::string>> compiles_of(const std::string& suffix) {
    std::lock_guard lock(mutex_);
    std::vector<std::vector<std::string>> found;
    for (const auto& argv : commands)
      if (compiled_unit(argv).ends_with(suffix)) found.push_back(argv);
    return found;
  }

  std::vector<std::vector<std::string>> commands;
  int most_headers_at_once = 0;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int headers_running_ = 0;
};

TorchFacts cuda_facts() {
  TorchFacts facts;
  facts.version = "2.11.0";
  facts.cuda_version = "13.0";
  facts.cuda_home = "/nonexistent-cuda";
  facts.include_paths = {"/torch/include"};
  facts.extension_suffix = ".so";
  facts.cxx_standard = "c++17";
  facts.text = "scripted";
  return facts;
}

InlineExtension relu_extension() {
  InlineExtension extension;
  extension.name = "relu_ext";
  extension.cpp_sources = {"torch::Tensor relu(torch::Tensor x);"};
  extension.cuda_sources = {"#include <torch/extension.h>\n"
                            "__global__ void relu_kernel(const float* x, float* y, int n) { y[0] = x[0]; }\n"
                            "torch::Tensor relu(torch::Tensor x) {\n"
                            "  auto y = torch::empty_like(x);\n"
                            "  relu_kernel<<<1, 1>>>(x.data_ptr<float>(), y.data_ptr<float>(), 1);\n"
                            "  return y;\n}\n"};
  extension.functions = {{"relu", "relu"}};
  return extension;
}

// The header a compile command puts ahead of its unit (`-include`), read back: its #include lines.
std::string included_headers(const std::vector<std::string>& argv) {
  auto include = std::find(argv.begin(), argv.end(), "-include");
  if (include == argv.end() || include + 1 == argv.end()) return "";
  auto text = drk::real_file_system().read_file(*(include + 1));
  return text ? *text : "";
}

drk::TemporaryDirectory fresh_cache() {
  auto made = drk::TemporaryDirectory::create("drk-extension-flow");
  DRK_REQUIRE(made);
  return std::move(*made);
}

struct Setup {
  drk::TemporaryDirectory cache = fresh_cache();
  std::shared_ptr<ScriptedCompilers> compilers = std::make_shared<ScriptedCompilers>();

  std::unique_ptr<TorchExtensionBuilder> builder() {
    auto made = TorchExtensionBuilder::create({.cache_dir = cache.path()}, cuda_facts(), compilers);
    DRK_REQUIRE(made);
    return std::move(*made);
  }
};

}  // namespace

DRK_TEST_CASE("main.cpp and the host unit compile with their narrow headers, precompiled side by side") {
  Setup setup;
  setup.compilers->parallel_headers = 2;
  auto built = setup.builder()->build(relu_extension());
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_CHECK(built->cuda_split);
  DRK_CHECK(built->narrow_main);
  DRK_CHECK(built->narrow_host);
  // The two headers are built at the same time, not one after the other.
  DRK_CHECK(setup.compilers->most_headers_at_once == 2);
  auto main_compiles = setup.compilers->compiles_of("main.cpp.narrow.cpp");
  DRK_REQUIRE(main_compiles.size() == 1);
  DRK_CHECK(included_headers(main_compiles[0]) ==
            "#include <torch/types.h>\n#include <torch/csrc/utils/pybind.h>\n#include <torch/csrc/Exceptions.h>\n");
  auto host_compiles = setup.compilers->compiles_of("cuda_host.cpp.narrow.cpp");
  DRK_REQUIRE(host_compiles.size() == 1);
  DRK_CHECK(included_headers(host_compiles[0]) == "#include <torch/types.h>\n");
  // Neither is compiled again with torch/extension.h.
  DRK_CHECK(setup.compilers->compiles_of("/main.cpp").empty());
  DRK_CHECK(setup.compilers->compiles_of("/cuda_host.cpp").empty());
}

DRK_TEST_CASE("a unit the narrow headers do not compile is compiled with torch/extension.h; its failure is not shown") {
  Setup setup;
  setup.compilers->fails = [](const std::string& unit) {
    return unit.ends_with("main.cpp.narrow.cpp") ? std::string("main.cpp: error: 'nn' is not a member of 'torch'")
                                                 : std::string();
  };
  auto built = setup.builder()->build(relu_extension());
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_CHECK_FALSE(built->narrow_main);
  DRK_CHECK(built->narrow_host);
  DRK_CHECK(built->used_precompiled_header);
  auto whole = setup.compilers->compiles_of("/main.cpp");
  DRK_REQUIRE(whole.size() == 1);
  DRK_CHECK(included_headers(whole[0]) == "#include <torch/extension.h>\n");
  DRK_CHECK(built->compiler_output.find("is not a member") == std::string::npos);
  DRK_CHECK(built->compiler_output.find("ok: main.cpp") != std::string::npos);
}

DRK_TEST_CASE("a unit that compiles neither way fails with the whole attempt's message") {
  Setup setup;
  setup.compilers->fails = [](const std::string& unit) {
    if (unit.ends_with("main.cpp.narrow.cpp")) return std::string("narrow: error: first");
    if (unit.ends_with("/main.cpp")) return std::string("main.cpp:2: error: 'undefined_factor' was not declared");
    return std::string();
  };
  auto built = setup.builder()->build(relu_extension());
  DRK_REQUIRE_FALSE(built);
  DRK_CHECK(built.error().code == drk::Errc::compile_error);
  DRK_CHECK(built.error().message.find("undefined_factor") != std::string::npos);
  DRK_CHECK(built.error().message.find("narrow: error") == std::string::npos);
}

DRK_TEST_CASE("a host unit that fails on device code a macro hid goes to nvcc whole, not to torch/extension.h") {
  Setup setup;
  setup.compilers->fails = [](const std::string& unit) {
    return unit.ends_with("cuda_host.cpp.narrow.cpp")
               ? "cuda.cu:3: error: '__global__" + std::string(kHiddenDeviceCode) + "' does not name a type"
               : std::string();
  };
  auto built = setup.builder()->build(relu_extension());
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_CHECK_FALSE(built->cuda_split);
  DRK_CHECK(built->cuda_whole_reason.find("its split did not compile") != std::string::npos);
  DRK_CHECK(setup.compilers->compiles_of("/cuda_host.cpp").empty());
  DRK_CHECK(setup.compilers->compiles_of("/cuda.cu").size() == 1);
}

DRK_TEST_CASE("with the narrow headers off, every unit is compiled as written") {
  Setup setup;
  auto builder = TorchExtensionBuilder::create({.cache_dir = setup.cache.path(), .narrow_headers = false},
                                               cuda_facts(), setup.compilers);
  DRK_REQUIRE(builder);
  auto built = (*builder)->build(relu_extension());
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_CHECK_FALSE(built->narrow_main);
  DRK_CHECK_FALSE(built->narrow_host);
  DRK_CHECK(setup.compilers->compiles_of(".narrow.cpp").empty());
  DRK_CHECK(setup.compilers->compiles_of("/main.cpp").size() == 1);
  DRK_CHECK(setup.compilers->compiles_of("/cuda_host.cpp").size() == 1);
}

DRK_TEST_CASE("a new kernel behind the same bindings links main.cpp's object filed by the first build") {
  Setup setup;
  auto builder = setup.builder();
  auto first = builder->build(relu_extension());
  DRK_REQUIRE_MESSAGE(first.ok(), (first ? std::string() : first.error().message));
  DRK_CHECK_FALSE(first->main_reused);
  DRK_CHECK(setup.compilers->compiles_of("/main.cpp.narrow.cpp").size() == 1);

  InlineExtension new_kernel = relu_extension();
  new_kernel.cuda_sources[0] += "// a faster kernel\n";
  auto second = builder->build(new_kernel);
  DRK_REQUIRE_MESSAGE(second.ok(), (second ? std::string() : second.error().message));
  DRK_CHECK_FALSE(second->cached);
  DRK_CHECK(second->main_reused);
  DRK_CHECK(second->narrow_main);
  DRK_CHECK(second->key != first->key);
  DRK_CHECK(setup.compilers->compiles_of("/main.cpp.narrow.cpp").size() == 1);
  DRK_CHECK(setup.compilers->compiles_of("/cuda_host.cpp.narrow.cpp").size() == 2);
  // What main.cpp's compile printed is in the second build's output too, as main.cpp.
  DRK_CHECK_MESSAGE(second->compiler_output.find("ok: main.cpp\n") != std::string::npos, second->compiler_output);

  // Another name is another main.cpp (TORCH_EXTENSION_NAME); so are other declarations.
  InlineExtension renamed = new_kernel;
  renamed.name = "relu_ext_2";
  auto third = builder->build(renamed);
  DRK_REQUIRE(third.ok());
  DRK_CHECK_FALSE(third->main_reused);
  InlineExtension declared = new_kernel;
  declared.cpp_sources[0] += "\n// another declaration";
  auto fourth = builder->build(declared);
  DRK_REQUIRE(fourth.ok());
  DRK_CHECK_FALSE(fourth->main_reused);
  DRK_CHECK(setup.compilers->compiles_of("/main.cpp.narrow.cpp").size() == 3);
}

DRK_TEST_CASE("a main.cpp that did not compile is not filed, and a damaged description is compiled again") {
  Setup setup;
  auto builder = setup.builder();
  setup.compilers->fails = [](const std::string& unit) {
    return unit.ends_with("main.cpp") || unit.ends_with("main.cpp.narrow.cpp") ? std::string("main.cpp:1: error: no")
                                                                                : std::string();
  };
  auto failed = builder->build(relu_extension());
  DRK_REQUIRE_FALSE(failed.ok());
  setup.compilers->fails = [](const std::string&) { return std::string(); };
  InlineExtension new_kernel = relu_extension();
  new_kernel.cuda_sources[0] += "// fixed\n";
  auto compiled = builder->build(new_kernel);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled ? std::string() : compiled.error().message));
  DRK_CHECK_FALSE(compiled->main_reused);

  for (const auto& entry : std::filesystem::directory_iterator(setup.cache.path() + "/units"))
    if (entry.path().extension() == ".json") DRK_REQUIRE(drk::write_file_atomically(drk::real_file_system(), entry.path().string(), "{\"narrow\": tr"));
  InlineExtension another_kernel = relu_extension();
  another_kernel.cuda_sources[0] += "// another\n";
  auto again = builder->build(another_kernel);
  DRK_REQUIRE(again.ok());
  DRK_CHECK_FALSE(again->main_reused);
}
