// Harness imports: the ELF reader on objects compiled here with the Evaluator's C++ command, on
// malformed files, and the classifier against this test process, which has LibTorch loaded (as
// the sandbox has) and exports its own functions (-rdynamic), as an executable may.
#include "actors/evaluator/harness_imports.h"

#include <elf.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "kernels/compile/compiler.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using namespace drk::evaluator;

// A function of this executable, which a candidate must not import.
extern "C" __attribute__((visibility("default"), noinline)) int harness_imports_test_probe() { return 7; }

namespace {

// Compiles `source` as the Evaluator compiles a CPU candidate; returns the object's path.
std::string compile(const drk::testing::RunDir& dir, const std::string& source) {
  auto compiler = drk::compile::Compiler::create(drk::compile::CompilerOptions{.cache_dir = dir.file("cache")});
  DRK_REQUIRE(compiler.ok());
  auto compiled = (*compiler)->compile(source);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled.ok() ? "" : compiled.error().message));
  return compiled->library_path;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool has_symbol(const DynamicLinkage& linkage, const std::string& name) {
  return std::any_of(linkage.symbols.begin(), linkage.symbols.end(), [&](const auto& s) { return s.name == name; });
}

// Honest: libc, libm and libstdc++; std::vector<float>'s resize and push_back, which LibTorch
// exports copies of; the typeinfo of std::logic_error, of which this executable holds a copy
// (a copy relocation).
const char* kRuntimesOnly = R"(#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>
#include "drk_kernel.h"
static void exp_range(const float* x, float* y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) y[i] = std::exp(x[i]) + std::tanh(x[i]);
}
static void check(int64_t n) { if (n < 0) throw std::logic_error("negative"); }
DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* in, int32_t, drk_tensor* out, int32_t) {
  const int64_t n = in[0].shape[0];
  try { check(n); } catch (const std::logic_error&) { return DRK_E_BAD_ARGUMENT; }
  std::vector<float> copy;
  copy.resize(n);
  copy.push_back(0.0f);
  std::memcpy(copy.data(), in[0].data, n * sizeof(float));
  std::vector<std::thread> workers;
  for (int t = 1; t < ctx->max_threads; ++t) workers.emplace_back(exp_range, copy.data(), (float*)out[0].data, 0, 0);
  exp_range(copy.data(), (float*)out[0].data, 0, n);
  for (auto& worker : workers) worker.join();
  return DRK_OK;
}
)";

const char* kImportsLibTorch = R"(#include "drk_kernel.h"
namespace at { void set_num_threads(int); }
DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  at::set_num_threads(8 * ctx->max_threads);
  return DRK_OK;
}
)";

const char* kDefinesLibTorchName = R"(#include "drk_kernel.h"
namespace at { __attribute__((noinline)) void set_num_threads(int) { asm volatile(""); } }
DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  at::set_num_threads(8 * ctx->max_threads);
  return DRK_OK;
}
)";

// Defines a clock of the C library that nothing of its own calls: no relocation names it.
const char* kDefinesClock = R"(#include "drk_kernel.h"
extern "C" int clock_gettime(int, void* now) {
  static_cast<long*>(now)[0] = 0;
  static_cast<long*>(now)[1] = 0;
  return 0;
}
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) { return DRK_OK; }
)";

const char* kWeakImportNowhere = R"(#include "drk_kernel.h"
extern "C" void drk_defined_nowhere_at_all(void) __attribute__((weak));
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  if (drk_defined_nowhere_at_all) drk_defined_nowhere_at_all();
  return DRK_OK;
}
)";

const char* kImportsExecutable = R"(#include "drk_kernel.h"
extern "C" int harness_imports_test_probe(void);
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  return harness_imports_test_probe() == 7 ? DRK_OK : 1;
}
)";

}  // namespace

DRK_TEST_CASE("this test process has LibTorch loaded, as the sandbox has") {
  DRK_REQUIRE(at::get_num_threads() >= 1);
  DRK_REQUIRE(harness_imports_test_probe() == 7);
}

DRK_TEST_CASE("the runtimes are the C/C++ and CUDA runtimes, by base name") {
  for (const char* runtime : {"libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6", "libmvec.so.1", "libstdc++.so.6",
                              "libgcc_s.so.1", "/lib64/ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2",
                              "librt.so.1", "libgomp.so.1", "libgomp-a34b3233.so.1", "libcudart.so.13",
                              "libcuda.so.1"})
    DRK_CHECK_MESSAGE(is_runtime_library(runtime), runtime);
  for (const char* harness : {"libtorch_cpu.so.1.13", "libtorch.so", "libc10.so", "libcublas.so.13", "libcudnn.so.9",
                              "libzmq.so.5", "libcapnp-0.9.2.so", "libcupti.so.13", "libnvidia-ml.so.1", "drk-sandbox",
                              "libcudadebugger.so.1", "libdlpack.so"})
    DRK_CHECK_MESSAGE(!is_runtime_library(harness), harness);
}

DRK_TEST_CASE("an object that binds only to the runtimes is accepted") {
  drk::testing::RunDir dir;
  const std::string object = compile(dir, kRuntimesOnly);
  auto linkage = read_dynamic_linkage(object);
  DRK_REQUIRE_MESSAGE(linkage.ok(), (linkage.ok() ? "" : linkage.error().message));
  DRK_CHECK(std::find(linkage->needed.begin(), linkage->needed.end(), "libc.so.6") != linkage->needed.end());
  DRK_CHECK(has_symbol(*linkage, "memcpy"));
  DRK_CHECK(has_symbol(*linkage, "expf"));
  const auto memcpy_symbol = std::find_if(linkage->symbols.begin(), linkage->symbols.end(),
                                          [](const auto& s) { return s.name == "memcpy"; });
  DRK_CHECK_FALSE(memcpy_symbol->defined);
  DRK_CHECK(memcpy_symbol->version.rfind("GLIBC_", 0) == 0);
  const auto findings = find_harness_reach(*linkage);
  DRK_CHECK_MESSAGE(findings.empty(), (findings.empty() ? "" : findings.front()));
  auto checked = check_harness_imports(object);
  DRK_REQUIRE(checked.ok());
  DRK_CHECK(*checked == "");
}

DRK_TEST_CASE("an import that binds into LibTorch is named, demangled, with its library") {
  drk::testing::RunDir dir;
  auto checked = check_harness_imports(compile(dir, kImportsLibTorch));
  DRK_REQUIRE_MESSAGE(checked.ok(), (checked.ok() ? "" : checked.error().message));
  DRK_CHECK_MESSAGE(checked->find("imports at::set_num_threads(int) from libtorch_cpu.so") != std::string::npos,
                    *checked);
}

DRK_TEST_CASE("a definition of a LibTorch name that the global scope interposes is named") {
  drk::testing::RunDir dir;
  auto checked = check_harness_imports(compile(dir, kDefinesLibTorchName));
  DRK_REQUIRE(checked.ok());
  DRK_CHECK_MESSAGE(checked->find("defines at::set_num_threads(int) but binds it to the one in libtorch_cpu.so") !=
                        std::string::npos,
                    *checked);
}

DRK_TEST_CASE("a definition of one of the C library's clocks is named, whatever the load flags") {
  drk::testing::RunDir dir;
  const std::string object = compile(dir, kDefinesClock);
  auto linkage = read_dynamic_linkage(object);
  DRK_REQUIRE(linkage.ok());
  DRK_CHECK(std::find(linkage->exported.begin(), linkage->exported.end(), "clock_gettime") != linkage->exported.end());
  DRK_CHECK(std::find(linkage->exported.begin(), linkage->exported.end(), "drk_kernel") != linkage->exported.end());
  auto checked = check_harness_imports(object);
  DRK_REQUIRE(checked.ok());
  DRK_CHECK_MESSAGE(checked->find("defines clock_gettime, a clock of the C library") != std::string::npos, *checked);
  // An object that defines only its entry point is not named.
  DRK_CHECK(is_c_library_clock("gettimeofday"));
  DRK_CHECK_FALSE(is_c_library_clock("drk_kernel"));
}

DRK_TEST_CASE("a weak import found nowhere is accepted") {
  drk::testing::RunDir dir;
  const std::string object = compile(dir, kWeakImportNowhere);
  auto linkage = read_dynamic_linkage(object);
  DRK_REQUIRE(linkage.ok());
  const auto weak = std::find_if(linkage->symbols.begin(), linkage->symbols.end(),
                                 [](const auto& s) { return s.name == "drk_defined_nowhere_at_all"; });
  DRK_REQUIRE(weak != linkage->symbols.end());
  DRK_CHECK(weak->weak);
  DRK_CHECK(find_harness_reach(*linkage).empty());
}

DRK_TEST_CASE("an import from the executable itself is named") {
  drk::testing::RunDir dir;
  auto checked = check_harness_imports(compile(dir, kImportsExecutable));
  DRK_REQUIRE(checked.ok());
  DRK_CHECK_MESSAGE(checked->find("imports harness_imports_test_probe from the sandbox executable (harness_imports_test)") !=
                        std::string::npos,
                    *checked);
}

DRK_TEST_CASE("a needed library outside the runtimes is named; findings past the first few are counted") {
  DynamicLinkage linkage;
  linkage.needed = {"libc.so.6", "libtorch_cpu.so", "libcudart.so.13"};
  DRK_CHECK(find_harness_reach(linkage) == std::vector<std::string>{"needs libtorch_cpu.so"});
  drk::testing::RunDir dir;
  const std::string many = R"(#include "drk_kernel.h"
namespace at { void set_num_threads(int); int get_num_threads(); int get_num_interop_threads();
void set_num_interop_threads(int); void init_num_threads(); int get_thread_num(); }
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) {
  at::set_num_threads(at::get_num_threads() + at::get_num_interop_threads() + at::get_thread_num());
  at::set_num_interop_threads(2);
  at::init_num_threads();
  return DRK_OK;
}
)";
  auto checked = check_harness_imports(compile(dir, many));
  DRK_REQUIRE(checked.ok());
  DRK_CHECK_MESSAGE(checked->find("; and 2 more") != std::string::npos, *checked);
}

DRK_TEST_CASE("garbage, truncated and missing files are clear errors") {
  drk::testing::RunDir dir;
  auto missing = read_dynamic_linkage(dir.file("absent.so"));
  DRK_REQUIRE_FALSE(missing.ok());
  DRK_CHECK(missing.error().code == drk::Errc::io_error);

  auto garbage = read_dynamic_linkage(dir.write("garbage.so", "this is not an ELF object at all, only text\n"));
  DRK_REQUIRE_FALSE(garbage.ok());
  DRK_CHECK(garbage.error().code == drk::Errc::invalid_argument);
  DRK_CHECK(garbage.error().message.find("no ELF header") != std::string::npos);

  auto empty = read_dynamic_linkage(dir.write("empty.so", ""));
  DRK_REQUIRE_FALSE(empty.ok());
  DRK_CHECK(empty.error().code == drk::Errc::invalid_argument);

  const std::string object = read_bytes(compile(dir, kImportsLibTorch));
  DRK_REQUIRE(parse_dynamic_linkage(object, "whole.so").ok());
  for (size_t length : {size_t{16}, sizeof(Elf64_Ehdr), size_t{200}, object.size() / 2}) {
    auto truncated = parse_dynamic_linkage(std::string_view(object).substr(0, length), "truncated.so");
    DRK_CHECK_MESSAGE(!truncated.ok(), length);
    if (!truncated.ok()) DRK_CHECK(truncated.error().message.find("'truncated.so' is not a shared object") == 0);
  }
}

DRK_TEST_CASE("corrupted objects never crash the reader") {
  drk::testing::RunDir dir;
  const std::string object = read_bytes(compile(dir, kImportsLibTorch));
  std::mt19937_64 rng(20261201);
  int rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string corrupt = object;
    // Half the bytes changed in the headers, where the reader's first offsets come from.
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips)
      corrupt[rng() % (rng() % 2 ? std::min<size_t>(corrupt.size(), 1024) : corrupt.size())] = static_cast<char>(rng());
    auto linkage = parse_dynamic_linkage(corrupt, "corrupt.so");
    if (!linkage.ok()) ++rejected;
  }
  DRK_CHECK(rejected > 0);
}
