// The compile cache on a failing disk: a compile or an adopt whose file write fails (a full disk,
// EIO on write or on fsync, a torn write, a failed rename: tests/support/fault_injecting_file_system.h)
// is an io_error naming the file, the entry cached before stays whole and is still answered from
// the cache, no part of a file lies under a final name, and the same source compiles once the disk
// is well again.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/compile/compiler.h"
#include "base/temporary_directory.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"

namespace fs = std::filesystem;
using drk::testing::FaultInjectingFileSystem;
using drk::testing::FileFault;
using namespace drk::compile;

namespace {

const std::string kObject(4096, 'o');

// A compiler that answers like one and "compiles" by writing kObject to its -o file.
class ObjectWritingRunner final : public CommandRunner {
 public:
  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
    if (argv.size() == 2 && argv[1] == "--version") return CommandRun{0, 0, false, "scripted c++ 1.0"};
    if (argv.back() == "--help=target") return CommandRun{0, 0, false, "  -march=  scripted-cpu\n"};
    const std::string& output = argv.back();
    auto created = drk::real_file_system().create_file(output, 0644);
    if (!created) return created.error();
    if (auto written = drk::real_file_system().write(created->get(), kObject, output); !written) return written.error();
    return CommandRun{0, 0, false, "a warning\n"};
  }
};

// Every file in the cache is whole: an object is kObject, and nothing is a temporary.
void check_cache_whole(const std::string& cache) {
  for (const auto& entry : fs::directory_iterator(cache)) {
    const std::string name = entry.path().filename().string();
    DRK_CAPTURE(name);
    DRK_CHECK(name.find(".tmp") == std::string::npos);
    DRK_CHECK(std::count(name.begin(), name.end(), '.') == 1);  // <key>.<ext>: no per-call temporary
    if (entry.path().extension() == ".so") {
      auto bytes = drk::real_file_system().read_file(entry.path().string());
      DRK_REQUIRE(bytes.ok());
      DRK_CHECK(*bytes == kObject);
    }
  }
}

struct CacheUnderTest {
  drk::TemporaryDirectory directory;
  FaultInjectingFileSystem files;
  std::unique_ptr<Compiler> compiler;
};

std::unique_ptr<CacheUnderTest> make_cache() {
  auto cache = std::make_unique<CacheUnderTest>();
  auto directory = drk::TemporaryDirectory::create("drk-compile-cache-test");
  DRK_REQUIRE(directory.ok());
  cache->directory = std::move(*directory);
  CompilerOptions options;
  options.cache_dir = cache->directory.path();
  options.file_system = &cache->files;
  auto compiler = Compiler::create(options, std::make_shared<ObjectWritingRunner>());
  DRK_REQUIRE_MESSAGE(compiler.ok(), compiler.error().describe());
  cache->compiler = std::move(*compiler);
  return cache;
}

}  // namespace

DRK_TEST_CASE("a compile whose cache write fails names the file and keeps the entries cached before") {
  // A compile writes the source and the output (one write, fsync and rename each), then renames
  // the object into place (and the source, whose failure is nobody's loss).
  for (FileFault fault : drk::testing::kEveryFileFault) {
    const int operations = fault == FileFault::rename_error ? 3 : 2;
    for (int nth = 1; nth <= operations; ++nth) {
      const std::string fault_name = drk::testing::fault_name(fault);
      DRK_CAPTURE(fault_name);
      DRK_CAPTURE(nth);
      auto cache = make_cache();
      auto first = cache->compiler->compile("int first;");
      DRK_REQUIRE(first.ok());

      cache->files.inject(fault, nth);
      auto second = cache->compiler->compile("int second;");
      cache->files.clear();
      DRK_REQUIRE_FALSE(second.ok());
      DRK_CHECK(second.error().code == drk::Errc::io_error);
      DRK_CHECK(second.error().message.find("'" + cache->directory.path() + "/") != std::string::npos);
      const std::string library = cache->directory.path() + "/" + cache->compiler->cache_key("int second;") + ".so";
      DRK_CHECK_FALSE(cache->files.exists(library));
      check_cache_whole(cache->directory.path());

      auto again = cache->compiler->compile("int first;");
      DRK_REQUIRE(again.ok());
      DRK_CHECK(again->cached);
      DRK_CHECK(again->compiler_output == "a warning\n");
      auto retried = cache->compiler->compile("int second;");
      DRK_REQUIRE_MESSAGE(retried.ok(), retried.error().describe());
      check_cache_whole(cache->directory.path());
    }
  }
}

DRK_TEST_CASE("an adopt whose cache write fails names the file and leaves no object under the key") {
  for (FileFault fault : drk::testing::kEveryFileFault) {
    for (int nth = 1; nth <= 2; ++nth) {
      const std::string fault_name = drk::testing::fault_name(fault);
      DRK_CAPTURE(fault_name);
      DRK_CAPTURE(nth);
      auto cache = make_cache();
      const std::string source = "int shipped;";
      const std::string key = cache->compiler->cache_key(source);

      cache->files.inject(fault, nth);
      auto adopted = cache->compiler->adopt(source, key, kObject, "shipped output\n");
      cache->files.clear();
      DRK_REQUIRE_FALSE(adopted.ok());
      DRK_CHECK(adopted.error().message.find("'" + cache->directory.path() + "/" + key) != std::string::npos);
      DRK_CHECK_FALSE(cache->files.exists(cache->directory.path() + "/" + key + ".so"));
      check_cache_whole(cache->directory.path());

      DRK_REQUIRE(cache->compiler->adopt(source, key, kObject, "shipped output\n").ok());
      auto compiled = cache->compiler->compile(source);
      DRK_REQUIRE(compiled.ok());
      DRK_CHECK(compiled->cached);
    }
  }
}
