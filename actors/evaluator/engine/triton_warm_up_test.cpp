// The Triton warm-up's pieces that need no GPU: which candidates it runs for, and the copy of the
// cache it leaves, which must never follow a link the candidate planted.
#include "actors/evaluator/engine/triton_warm_up.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/temporary_directory.h"
#include "tests/doctest_drk.h"

using namespace drk;
using namespace drk::evaluator;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

DRK_TEST_CASE("a candidate that imports Triton is warmed up; one that only names it is not") {
  DRK_CHECK(uses_triton("import torch\nimport triton\nimport triton.language as tl\n"));
  DRK_CHECK(uses_triton("from triton import language as tl\n"));
  DRK_CHECK(uses_triton("import torch\n    import triton  # inside a function\n"));
  DRK_CHECK_FALSE(uses_triton("import torch\n# a Triton kernel would be faster\n"));
  DRK_CHECK_FALSE(uses_triton("import torch\nx = 'import tritonic'\n"));
  DRK_CHECK_FALSE(uses_triton("import tritonclient\n"));
}

DRK_TEST_CASE("the warm-up's cache is copied file by file, and a link it left is not followed") {
  auto from = TemporaryDirectory::create("drk-test-cache-from");
  auto to = TemporaryDirectory::create("drk-test-cache-to");
  auto secret = TemporaryDirectory::create("drk-test-secret");
  DRK_REQUIRE((from && to && secret));
  const fs::path source(from->path());
  write(source / "ab12" / "kernel.cubin", "cubin");
  write(source / "ab12" / "kernel.json", "{}");
  write(source / "cd34" / "__triton_launcher.so", "launcher");
  write(fs::path(secret->path()) / "shadow", "not the candidate's");
  fs::create_symlink(fs::path(secret->path()) / "shadow", source / "cd34" / "stolen.so");
  fs::create_directory_symlink(secret->path(), source / "elsewhere");

  DRK_REQUIRE(copy_triton_cache(source, to->path()));
  const fs::path copy(to->path());
  DRK_CHECK(read(copy / "ab12" / "kernel.cubin") == "cubin");
  DRK_CHECK(read(copy / "ab12" / "kernel.json") == "{}");
  DRK_CHECK(read(copy / "cd34" / "__triton_launcher.so") == "launcher");
  DRK_CHECK_FALSE(fs::exists(fs::symlink_status(copy / "cd34" / "stolen.so")));
  DRK_CHECK_FALSE(fs::exists(fs::symlink_status(copy / "elsewhere")));
}

DRK_TEST_CASE("the cache's groups name its files where it now is, not where the warm-up left them") {
  auto cache = TemporaryDirectory::create("drk-test-cache-staged");
  DRK_REQUIRE(cache);
  const fs::path root(cache->path());
  write(root / "ab12" / "relu_kernel.cubin", "cubin");
  write(root / "ab12" / "relu_kernel.json", "{}");
  write(root / "ab12" / "__grp__relu_kernel.json",
        R"({"child_paths": {"relu_kernel.cubin": "/tmp/drk-sandbox-warm/triton-cache/ab12/relu_kernel.cubin",)"
        R"( "relu_kernel.json": "/tmp/drk-sandbox-warm/triton-cache/ab12/relu_kernel.json",)"
        R"( "relu_kernel.ptx": "/tmp/drk-sandbox-warm/triton-cache/ab12/relu_kernel.ptx"}})");
  write(root / "cd34" / "__triton_launcher.so", "launcher");

  DRK_REQUIRE(relocate_triton_groups(root));
  const auto group = nlohmann::json::parse(read(root / "ab12" / "__grp__relu_kernel.json"));
  DRK_CHECK(group["child_paths"]["relu_kernel.cubin"] == (root / "ab12" / "relu_kernel.cubin").string());
  DRK_CHECK(group["child_paths"]["relu_kernel.json"] == (root / "ab12" / "relu_kernel.json").string());
  // Not in the cache: left as it was, so that Triton's lookup misses rather than reads elsewhere.
  DRK_CHECK(group["child_paths"]["relu_kernel.ptx"] == "/tmp/drk-sandbox-warm/triton-cache/ab12/relu_kernel.ptx");
  DRK_CHECK(read(root / "cd34" / "__triton_launcher.so") == "launcher");

  write(root / "ef56" / "__grp__broken.json", "not json");
  auto broken = relocate_triton_groups(root);
  DRK_REQUIRE_FALSE(broken);
  DRK_CHECK(broken.error().message.find("__grp__broken.json") != std::string::npos);
}

DRK_TEST_CASE("the kernels a Triton warm-up compiled are the candidate's own, by their metadata's names") {
  auto dir = TemporaryDirectory::create("drk-triton-names");
  DRK_REQUIRE(dir);
  const fs::path root = dir->path();
  write(root / "ab12" / "relu_kernel.json", R"({"name": "relu_kernel", "num_warps": 4, "shared": 1024})");
  write(root / "ab12" / "relu_kernel.cubin", "cubin");
  write(root / "ab12" / "__grp__relu_kernel.json", R"({"child_paths": {}})");
  write(root / "cd34" / "add_kernel.json", R"({"name": "add_kernel"})");
  write(root / "cd34" / "add_kernel.cubin", "cubin");
  // Metadata without a compiled kernel beside it, a launcher, and a C++-mangled name (which would
  // make a library's kernel count as the candidate's) are not own kernels.
  write(root / "ef56" / "stray.json", R"({"name": "stray"})");
  write(root / "gh78" / "__triton_launcher.so", "launcher");
  write(root / "ij90" / "decoy.json", R"({"name": "_ZN2at6native29vectorized_elementwise_kernel"})");
  write(root / "ij90" / "decoy.cubin", "cubin");
  write(root / "kl12" / "broken.json", "not json");
  write(root / "kl12" / "broken.cubin", "cubin");

  const std::vector<TritonKernel> kernels = triton_kernels(root);
  DRK_REQUIRE(kernels.size() == 2);
  DRK_CHECK(kernels[0].name == "add_kernel");
  DRK_CHECK(kernels[0].shared_bytes == 0);
  DRK_CHECK(kernels[1].name == "relu_kernel");
  DRK_CHECK(kernels[1].shared_bytes == 1024);
}
