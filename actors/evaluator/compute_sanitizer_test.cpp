// What the out-of-bounds and uninitialised-read checks read from compute-sanitizer's memcheck and
// initcheck output (no GPU needed: the runs themselves are covered by the CUDA hack corpus,
// tests/hacks/cuda/reads_past_input.cu and tests/hacks/cuda/reads_output_before_writing.cu).
#include "actors/evaluator/compute_sanitizer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using drk::evaluator::parse_memcheck_output;

namespace {

constexpr const char* kOneError = R"(========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at relu(const float *, float *, long)+0x90 in /tmp/drk/relu.cu:12
=========     by thread (255,0,0) in block (4095,0,0)
=========     Address 0x7f3a40400000 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a40000000 of size 4194304 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f1e3] in libcuda.so.1
=========
========= Invalid __global__ read of size 4 bytes
=========     at relu(const float *, float *, long)+0x90 in /tmp/drk/relu.cu:12
=========
========= ERROR SUMMARY: 2 errors
)";

// initcheck's format (CUDA 12 and 13): a device read of memory nothing wrote, then the harness's
// copy of an output the candidate never wrote, which is not the candidate's read.
constexpr const char* kInitcheck = R"(========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at relu_accumulate(const float *, float *, long)+0x70 in /tmp/drk/candidate.cu:9
=========     by thread (31,0,0) in block (1,0,0)
=========     Address 0x7fdff720250c
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f26a0]
=========                in /lib64/libcuda.so.1
=========         Host Frame:cudaLaunchKernel [0x70aae]
=========                in /lib/libcudart.so.13
=========
========= Host API memory access error at host access to 0x7f7fcdc01200 of size 400 bytes
=========     Uninitialized access at 0x7f7fcdc01300 on access by cudaMemcpy source
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: [0x1fe264]
=========                in /usr/lib/x86_64-linux-gnu/libcuda.so.1
=========
========= Uninitialized __global__ memory read of size 4 bytes
=========     at relu_accumulate(const float *, float *, long)+0x70 in /tmp/drk/candidate.cu:9
=========     by thread (0,0,0) in block (2,0,0)
=========     Address 0x7fdff7202600
=========
========= ERROR SUMMARY: 3 errors
)";

}  // namespace

DRK_TEST_CASE("initcheck's device reads are counted and excerpted; host API copies are not the candidate's") {
  auto report = drk::evaluator::parse_initcheck_output(kInitcheck);
  DRK_CHECK(report.finished);
  DRK_CHECK(report.errors == 3);
  DRK_CHECK(report.device_reads == 2);
  DRK_CHECK(report.excerpt ==
            "Uninitialized __global__ memory read of size 4 bytes | at relu_accumulate(const float *, float *, long)"
            "+0x70 in /tmp/drk/candidate.cu:9 | by thread (31,0,0) in block (1,0,0) | Address 0x7fdff720250c");
  auto copies_only = drk::evaluator::parse_initcheck_output(
      "========= COMPUTE-SANITIZER\n"
      "========= Host API memory access error at host access to 0x7f14c9e00200 of size 16 bytes\n"
      "=========     Uninitialized access at 0x7f14c9e00200 on access by cudaMemcpy source\n"
      "========= ERROR SUMMARY: 1 error\n");
  DRK_CHECK(copies_only.finished);
  DRK_CHECK(copies_only.errors == 1);
  DRK_CHECK(copies_only.device_reads == 0);
  DRK_CHECK(copies_only.excerpt.empty());
}

DRK_TEST_CASE("memcheck's excerpt leaves the host backtrace out, its library lines too") {
  auto report = parse_memcheck_output(kInitcheck);
  DRK_CHECK(report.excerpt.find("libcuda") == std::string::npos);
  DRK_CHECK(report.excerpt.find("Host Frame") == std::string::npos);
}

DRK_TEST_CASE("memcheck's first error becomes the excerpt, and the summary its count") {
  auto report = parse_memcheck_output(kOneError);
  DRK_CHECK(report.finished);
  DRK_CHECK(report.errors == 2);
  DRK_CHECK(report.excerpt.find("Invalid __global__ read of size 4 bytes | at relu(") == 0);
  DRK_CHECK(report.excerpt.find("is out of bounds") != std::string::npos);
  DRK_CHECK(report.excerpt.find("Host Frame") == std::string::npos);
  DRK_CHECK(report.excerpt.find("by thread (255,0,0)") != std::string::npos);
}

DRK_TEST_CASE("a clean run has no excerpt; a run cut short did not finish") {
  auto clean = parse_memcheck_output("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  DRK_CHECK(clean.finished);
  DRK_CHECK(clean.errors == 0);
  DRK_CHECK(clean.excerpt.empty());
  auto cut = parse_memcheck_output("========= COMPUTE-SANITIZER\n");
  DRK_CHECK_FALSE(cut.finished);
}

DRK_TEST_CASE("DRK_COMPUTE_SANITIZER names the sanitizer, and a wrong one is named back") {
  drk::testing::RunDir dir;
  const auto tool = (dir.path() / "compute-sanitizer").string();
  std::ofstream(tool) << "#!/bin/sh\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  ::setenv("DRK_COMPUTE_SANITIZER", tool.c_str(), 1);
  auto found = drk::evaluator::find_compute_sanitizer();
  DRK_REQUIRE(found.ok());
  DRK_CHECK(*found == tool);
  ::setenv("DRK_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer", 1);
  auto missing = drk::evaluator::find_compute_sanitizer();
  DRK_REQUIRE_FALSE(missing.ok());
  DRK_CHECK(missing.error().message.find("/nonexistent/compute-sanitizer") != std::string::npos);
  ::unsetenv("DRK_COMPUTE_SANITIZER");
}
