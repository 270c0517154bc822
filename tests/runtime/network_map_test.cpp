// The network map on disk: a write that fails (a full disk, EIO on write or on fsync, a torn
// write, a failed rename: tests/support/fault_injecting_file_system.h) is an error naming the
// file, and the map written before stays whole and readable.
#include <filesystem>
#include <string>

#include "runtime/nodes/network_map.h"
#include "base/temporary_directory.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"

using drk::testing::FaultInjectingFileSystem;
using drk::testing::FileFault;
using namespace drk::runtime;

DRK_TEST_CASE("a network map whose write fails names the file and leaves the previous map whole") {
  NetworkMap first;
  first.nodes["head"] = NodeAddress{"10.0.0.1", "0.0.0.0", 7701, ""};
  NetworkMap second = first;
  second.nodes["gpu1"] = NodeAddress{"10.0.0.2", "0.0.0.0", 7800, std::string(40, 'k')};
  for (FileFault fault : drk::testing::kEveryFileFault) {
    const std::string fault_name = drk::testing::fault_name(fault);
    DRK_CAPTURE(fault_name);
    auto run = drk::TemporaryDirectory::create("drk-network-map-test");
    DRK_REQUIRE(run.ok());
    const std::string path = run->path() + "/network.yaml";
    FaultInjectingFileSystem files;
    DRK_REQUIRE(write_network_map(first, path, files).ok());

    files.inject(fault);
    auto written = write_network_map(second, path, files);
    DRK_REQUIRE_FALSE(written.ok());
    DRK_CHECK(written.error().code == drk::Errc::io_error);
    DRK_CHECK(written.error().message.find("'" + path) != std::string::npos);
    files.clear();

    auto reread = read_network_map(path, files);
    DRK_REQUIRE(reread.ok());
    DRK_CHECK(reread->nodes == first.nodes);
    int entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(run->path())) ++entries;
    DRK_CHECK(entries == 1);  // no temporary left behind
  }
}
