// A checkpoint whose write fails (a full disk, EIO on write or on fsync, a torn write, a failed
// rename: tests/support/fault_injecting_file_system.h) is an error naming the file, and the
// checkpoint before it stays whole and readable; no file under its final name is ever a part.
#include <filesystem>
#include <string>

#include "kernels/schedule/policy_checkpoint.h"
#include "base/temporary_directory.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"

namespace fs = std::filesystem;
using drk::testing::FaultInjectingFileSystem;
using drk::testing::FileFault;
using namespace drk::schedule;

namespace {

// Each checkpoint writes four files (v<N>.pt, adam-v<N>.pt, latest.pt, state.yaml): one write,
// one fsync and one rename each.
constexpr int kFilesPerCheckpoint = 4;

CheckpointState state_of(uint32_t version) {
  CheckpointState state;
  state.version = version;
  state.step = version * 10;
  StepSummary report;
  report.step = state.step - 1;
  report.policy_version = version;
  state.reports.push_back(report);
  return state;
}

std::string policy_bytes(uint32_t version) { return std::string(4096, static_cast<char>('a' + version)); }
std::string optimizer_bytes(uint32_t version) { return std::string(8192, static_cast<char>('A' + version)); }

}  // namespace

DRK_TEST_CASE("a checkpoint write that fails names the file and leaves the previous checkpoint whole") {
  for (FileFault fault : drk::testing::kEveryFileFault) {
    for (int nth = 1; nth <= kFilesPerCheckpoint; ++nth) {
      DRK_CAPTURE(nth);
      const std::string fault_name = drk::testing::fault_name(fault);
      DRK_CAPTURE(fault_name);
      auto run = drk::TemporaryDirectory::create("drk-checkpoint-test");
      DRK_REQUIRE(run.ok());
      const std::string& run_dir = run->path();
      FaultInjectingFileSystem files;
      DRK_REQUIRE(write_checkpoint(run_dir, state_of(1), policy_bytes(1), optimizer_bytes(1), files).ok());

      files.inject(fault, nth);
      auto written = write_checkpoint(run_dir, state_of(2), policy_bytes(2), optimizer_bytes(2), files);
      DRK_REQUIRE_FALSE(written.ok());
      DRK_CHECK(written.error().code == drk::Errc::io_error);
      DRK_CHECK(written.error().message.find("'" + policy_directory(run_dir) + "/") != std::string::npos);
      files.clear();

      auto state = read_checkpoint_state(run_dir, files);
      DRK_REQUIRE(state.ok());
      DRK_REQUIRE(state->has_value());
      DRK_CHECK((*state)->version == 1);
      DRK_CHECK((*state)->step == 10);
      auto policy = read_policy_version(run_dir, 1, files);
      DRK_REQUIRE(policy.ok());
      DRK_CHECK(*policy == policy_bytes(1));
      auto optimizer = read_optimizer_state(run_dir, 1, files);
      DRK_REQUIRE(optimizer.ok());
      DRK_CHECK(*optimizer == std::optional<std::string>(optimizer_bytes(1)));
      // Every file left is one whole version or the other, and no temporary is left behind.
      for (const auto& entry : fs::directory_iterator(policy_directory(run_dir))) {
        const std::string name = entry.path().filename().string();
        DRK_CAPTURE(name);
        DRK_CHECK(name.find(".tmp") == std::string::npos);
        const auto bytes = files.read_file(entry.path().string());
        DRK_REQUIRE(bytes.ok());
        if (name == "state.yaml") continue;
        const bool optimizer_file = name.rfind("adam-", 0) == 0;
        DRK_CHECK((*bytes == (optimizer_file ? optimizer_bytes(1) : policy_bytes(1)) ||
                   *bytes == (optimizer_file ? optimizer_bytes(2) : policy_bytes(2))));
      }

      // The disk is well again: the next checkpoint is written in full.
      DRK_REQUIRE(write_checkpoint(run_dir, state_of(2), policy_bytes(2), optimizer_bytes(2), files).ok());
      auto after = read_checkpoint_state(run_dir, files);
      DRK_REQUIRE(after.ok());
      DRK_CHECK((*after)->version == 2);
    }
  }
}
