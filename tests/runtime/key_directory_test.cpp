// The CURVE key directory on disk: a key pair whose write fails (a full disk, EIO on write or on
// fsync, a torn write, a failed rename or link: tests/support/fault_injecting_file_system.h) is an
// error naming the file; the secret key written before stays whole and private, and a new
// identity leaves no file behind.
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

#include "runtime/nodes/curve_keys.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using testing::FaultInjectingFileSystem;
using testing::FileFault;
using testing::RunDir;

CurveKeyPair new_pair() {
  auto pair = generate_curve_key_pair();
  DRK_REQUIRE(pair.ok());
  return *pair;
}

unsigned file_mode(const std::string& path) {
  struct stat status {};
  DRK_REQUIRE(::stat(path.c_str(), &status) == 0);
  return status.st_mode & 07777;
}

int entries_of(const std::string& dir) {
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++entries;
  return entries;
}

void check_names_a_key_file(const Status& written, const std::string& keys) {
  DRK_REQUIRE_FALSE(written.ok());
  DRK_CHECK(written.error().code == Errc::io_error);
  const std::string message = written.error().message;
  DRK_CAPTURE(message);
  DRK_CHECK(message.find("'" + keys + "/") != std::string::npos);
}

DRK_TEST_CASE("a key pair whose write fails names the file and keeps the pair written before") {
  const CurveKeyPair first = new_pair();
  const CurveKeyPair second = new_pair();
  for (FileFault fault : testing::kEveryFileFault) {
    // The fault from the pair's first file on, or from its second (the first one gets through).
    for (int nth : {1, 2}) {
      const std::string fault_name = testing::fault_name(fault) + std::string(" from call ") + std::to_string(nth);
      DRK_CAPTURE(fault_name);
      RunDir dir;
      const std::string keys = dir.file("keys");
      FaultInjectingFileSystem files;
      DRK_REQUIRE(write_key_pair(keys, "head", first, false, files).ok());

      files.inject(fault, nth);
      check_names_a_key_file(write_key_pair(keys, "head", second, /*overwrite=*/true, files), keys);
      files.inject(fault, nth);
      check_names_a_key_file(write_key_pair(keys, "node-a", second, false, files), keys);
      files.clear();

      auto kept = read_key_pair(keys, "head");
      DRK_REQUIRE(kept.ok());
      DRK_CHECK(kept->secret_key == first.secret_key);
      DRK_CHECK(file_mode(keys + "/head.key") == 0600);
      DRK_CHECK(entries_of(keys) == 2);  // head.key and head.pub: no temporary, nothing of node-a
      // Only a rename that fails after the .pub went in can leave the new .pub: loading names it.
      auto identity = load_curve_identity(keys, "head");
      if (fault == FileFault::rename_error && nth == 2) {
        DRK_REQUIRE_FALSE(identity.ok());
        DRK_CHECK(identity.error().message.find(keys + "/head.pub") != std::string::npos);
      } else {
        DRK_REQUIRE(identity.ok());
        DRK_CHECK(identity->allowed == std::map<std::string, std::string>{{"head", first.public_key}});
      }
    }
  }
}

DRK_TEST_CASE("a key pair written through the seam is private, and refuses an identity that exists") {
  RunDir dir;
  const std::string keys = dir.file("nested/keys");
  FaultInjectingFileSystem files;
  const CurveKeyPair pair = new_pair();
  DRK_REQUIRE(write_key_pair(keys, "head", pair, false, files).ok());
  DRK_CHECK(file_mode(keys) == 0700);
  DRK_CHECK(file_mode(keys + "/head.key") == 0600);
  DRK_CHECK(file_mode(keys + "/head.pub") == 0644);
  auto refused = write_key_pair(keys, "head", new_pair(), false, files);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().code == Errc::invalid_argument);
  DRK_CHECK(read_key_pair(keys, "head")->secret_key == pair.secret_key);
}

}  // namespace
}  // namespace drk::runtime
