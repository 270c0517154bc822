// A run directory's node files (RUN_DIR/node.yaml, RUN_DIR/network.yaml): a write that fails (a
// full disk, EIO on write or on fsync, a torn write, a failed rename:
// tests/support/fault_injecting_file_system.h) is an error naming the file, and the network map
// written before stays whole and readable.
#include <filesystem>
#include <string>

#include "runtime/nodes/run_network.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using testing::FaultInjectingFileSystem;
using testing::FileFault;
using testing::RunDir;

DRK_TEST_CASE("run network files whose write fails name the file and keep the network written before") {
  NetworkMap first;
  first.nodes["head"] = NodeAddress{"10.0.0.1", "0.0.0.0", 7701, ""};
  NetworkMap second = first;
  second.nodes["gpu1"] = NodeAddress{"10.0.0.2", "0.0.0.0", 7800, ""};
  for (FileFault fault : testing::kEveryFileFault) {
    // The fault from node.yaml on, or from network.yaml (node.yaml gets through).
    for (int nth : {1, 2}) {
      const std::string fault_name = testing::fault_name(fault) + std::string(" from call ") + std::to_string(nth);
      DRK_CAPTURE(fault_name);
      RunDir run;
      const std::string run_dir = run.path().string();
      FaultInjectingFileSystem files;
      DRK_REQUIRE(write_run_network(run_dir, NodeIdentity{"head", ""}, first, files).ok());

      files.inject(fault, nth);
      auto written = write_run_network(run_dir, NodeIdentity{"gpu1", ""}, second, files);
      DRK_REQUIRE_FALSE(written.ok());
      DRK_CHECK(written.error().code == Errc::io_error);
      const std::string message = written.error().message;
      DRK_CAPTURE(message);
      DRK_CHECK(message.find("'" + run_dir + (nth == 1 ? "/node.yaml" : "/network.yaml")) != std::string::npos);
      files.clear();

      auto reread = load_run_network(run_dir, files);
      DRK_REQUIRE(reread.ok());
      DRK_CHECK(reread->map.nodes == first.nodes);
      DRK_CHECK(reread->local_node == (nth == 1 ? "head" : "gpu1"));
      int entries = 0;
      for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(run_dir)) ++entries;
      DRK_CHECK(entries == 2);  // no temporary left behind
    }
  }
}

DRK_TEST_CASE("a run directory without network.yaml is a one-machine run") {
  RunDir run;
  auto network = load_run_network(run.path().string());
  DRK_REQUIRE(network.ok());
  DRK_CHECK(network->map.empty());
  DRK_CHECK_FALSE(network->curve.has_value());
}

}  // namespace
}  // namespace drk::runtime
