// run_program(): a program run to its end with its output (stdout and stderr) in a file of a
// RunDir, for tests that call `drk` as a user would. The test fails (DRK_REQUIRE) when the
// program has not ended within ten minutes.
#pragma once

#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace drk::testing {

struct Ran {
  int exit_code = -1;
  std::string output;
};

inline Ran run_program(const RunDir& dir, const std::string& program, const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  SpawnedProgram spawned(argv, dir.file("output.txt"));
  DRK_REQUIRE(spawned.wait_for(600'000));
  return {spawned.exit_code(), dir.read("output.txt")};
}

}  // namespace drk::testing
