// Slurm's hostlist syntax: what `scontrol show hostnames` prints for the same list.
#include "runtime/nodes/slurm_hostlist.h"

#include <string>
#include <vector>

#include "tests/doctest_drk.h"

using drk::runtime::expand_hostlist;
using Hosts = std::vector<std::string>;

DRK_TEST_CASE("a hostlist expands ranges, keeps zero padding, and splits hosts at top-level commas") {
  DRK_CHECK(expand_hostlist("localhost").value() == Hosts{"localhost"});
  DRK_CHECK(expand_hostlist("gpu[01-03,07],cpu1").value() == Hosts{"gpu01", "gpu02", "gpu03", "gpu07", "cpu1"});
  DRK_CHECK(expand_hostlist("n[8-11]").value() == Hosts{"n8", "n9", "n10", "n11"});
  DRK_CHECK(expand_hostlist("n[098-101]").value() == Hosts{"n098", "n099", "n100", "n101"});
  DRK_CHECK(expand_hostlist("a[1-2]b,c").value() == Hosts{"a1b", "a2b", "c"});
}

DRK_TEST_CASE("a hostlist with two brackets in one name varies the first slowest") {
  DRK_CHECK(expand_hostlist("rack[1-2]-n[1-2]").value() == Hosts{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"});
}

DRK_TEST_CASE("a malformed hostlist is an error that quotes it and says what is wrong") {
  const auto message = [](const char* list) {
    auto hosts = expand_hostlist(list);
    DRK_REQUIRE_FALSE(hosts.ok());
    return hosts.error().message;
  };
  DRK_CHECK(message("gpu[1-3").find("leaves a bracket open") != std::string::npos);
  DRK_CHECK(message("gpu1-3]").find("closes a bracket") != std::string::npos);
  DRK_CHECK(message("gpu[3-1]").find("runs backwards") != std::string::npos);
  DRK_CHECK(message("gpu[a-b]").find("'a' where a number belongs") != std::string::npos);
  DRK_CHECK(message("gpu[]").find("where a number belongs") != std::string::npos);
  DRK_CHECK(message("a,,b").find("empty name") != std::string::npos);
  DRK_CHECK(message("").find("empty name") != std::string::npos);
  DRK_CHECK(message("n[0-99999999]").find("more than 65536 hosts") != std::string::npos);
  DRK_CHECK(message("a[[1]]").find("nests") != std::string::npos);
  DRK_CHECK(message("gpu[1-3").find("'gpu[1-3'") != std::string::npos);
}
