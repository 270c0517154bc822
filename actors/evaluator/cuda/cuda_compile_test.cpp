// The CUDA candidates' compile path without a GPU (CI runs it): nvcc builds a shared object,
// the resource report is parsed per kernel, and the cache answers a second compile with the
// same report.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/evaluator/ptxas_report.h"
#include "kernels/compile/compiler.h"
#include "tests/doctest_drk.h"

namespace fs = std::filesystem;
using namespace drk::compile;
using namespace drk::evaluator;

namespace {

std::string cuda_candidate(const std::string& name) {
  const char* dir = std::getenv("DRK_SOURCE_DIR");
  std::ifstream in(std::string(dir ? dir : ".") + "/tests/candidates/cuda/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct TemporaryCache {
  fs::path path = fs::temp_directory_path() / ("drk-cuda-compile-test-" + std::to_string(getpid()));
  ~TemporaryCache() { fs::remove_all(path); }
};

}  // namespace

DRK_TEST_CASE("ptxas's report gives registers, spills, stack and shared memory per entry") {
  const char* report =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Function properties for _Z6kernelPf\n"
      "    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 8320 bytes smem, 368 bytes cmem[0]\n"
      "ptxas info    : Compile time = 29.629 ms\n"
      "ptxas info    : Compiling entry function '_Z4tinyv' for 'sm_90'\n"
      "ptxas info    : Used 6 registers, used 0 barriers\n";
  auto kernels = parse_ptxas_report(report);
  DRK_REQUIRE(kernels.size() == 2);
  DRK_CHECK(kernels[0].name == "_Z6kernelPf");
  DRK_CHECK(kernels[0].architecture == "sm_90");
  DRK_CHECK(kernels[0].registers == 255);
  DRK_CHECK(kernels[0].stack_frame_bytes == 48);
  DRK_CHECK(kernels[0].spill_store_bytes == 40);
  DRK_CHECK(kernels[0].spill_load_bytes == 36);
  DRK_CHECK(kernels[0].shared_bytes == 8320);
  DRK_CHECK(kernels[0].constant_bytes == 368);
  DRK_CHECK(kernels[0].barriers == 1);
  DRK_CHECK(kernels[1].name == "_Z4tinyv");
  DRK_CHECK(kernels[1].registers == 6);
  DRK_CHECK(kernels[1].spill_store_bytes == 0);
}

DRK_TEST_CASE("nvcc builds a CUDA candidate into a shared object with its resource report, cached by content") {
  TemporaryCache cache;
  CompilerOptions options = nvcc_compiler_options("sm_90");
  options.cache_dir = cache.path.string();
  auto compiler = Compiler::create(options);
  DRK_REQUIRE_MESSAGE(compiler.ok(), compiler.error().describe());
  auto first = (*compiler)->compile(cuda_candidate("matmul.cu"));
  DRK_REQUIRE_MESSAGE(first.ok(), first.error().describe());
  DRK_CHECK_FALSE(first->cached);
  DRK_CHECK(fs::exists(first->library_path));
  auto kernels = parse_ptxas_report(first->compiler_output);
  DRK_REQUIRE(kernels.size() == 1);
  DRK_CHECK(kernels[0].name == "_Z12matmul_tiledPKfS0_Pfiii");
  DRK_CHECK(kernels[0].registers > 0);
  DRK_CHECK(kernels[0].shared_bytes == 2 * 32 * 32 * 4 + 32 * 4);  // the two tiles, one padded

  auto second = (*compiler)->compile(cuda_candidate("matmul.cu"));
  DRK_REQUIRE(second.ok());
  DRK_CHECK(second->cached);
  DRK_CHECK(second->library_path == first->library_path);
  DRK_CHECK(parse_ptxas_report(second->compiler_output).size() == 1);
}

DRK_TEST_CASE("a CUDA candidate that does not compile returns nvcc's message naming candidate.cu") {
  TemporaryCache cache;
  CompilerOptions options = nvcc_compiler_options("sm_90");
  options.cache_dir = cache.path.string();
  auto compiler = Compiler::create(options);
  DRK_REQUIRE(compiler.ok());
  auto compiled = (*compiler)->compile("#include \"drk_kernel.h\"\n__global__ void k() { undefined_name = 1; }\n");
  DRK_REQUIRE_FALSE(compiled.ok());
  DRK_CHECK(compiled.error().code == drk::Errc::compile_error);
  DRK_CHECK(compiled.error().message.find("candidate.cu") != std::string::npos);
  DRK_CHECK(compiled.error().message.find("undefined_name") != std::string::npos);
}
