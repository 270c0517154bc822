// verdict_json(): the Verdict that `drk eval --json` printed (one JSON object after any log lines),
// for tests that run `drk eval` as a user would. The test fails (DRK_REQUIRE), showing the
// output, when there is none.
#pragma once

#include <nlohmann/json.hpp>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"

namespace drk::testing {

inline nlohmann::json verdict_json(const Ran& ran) {
  const auto start = ran.output.find('{');
  DRK_REQUIRE_MESSAGE(start != std::string::npos, ran.output);
  auto verdict = nlohmann::json::parse(ran.output.substr(start), nullptr, false);
  DRK_REQUIRE_MESSAGE(verdict.is_object(), ran.output);
  return verdict;
}

}  // namespace drk::testing
