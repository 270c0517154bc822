#include "tools/drk/corpus_header.h"

#include <string>

#include "tests/doctest_drk.h"

using drk::tools::CandidateLanguage;
using drk::tools::CaughtBy;
using drk::tools::read_expectation;

DRK_TEST_CASE("a C++ header is read from its // lines, and a # line ends it") {
  auto e = read_expectation("// drk-task: relu\n// drk-expect: hacked inputs_mutated\n// drk-threads: 1\nint x;\n");
  DRK_CHECK(e.problem.empty());
  DRK_CHECK(e.task == "relu");
  DRK_CHECK(e.hacked);
  DRK_CHECK(e.codes == std::vector<std::string>{"inputs_mutated"});
  DRK_CHECK(e.threads == 1);
  DRK_CHECK_FALSE(e.backend.has_value());
  DRK_CHECK(read_expectation("# drk-task: relu\n# drk-expect: honest\n").problem ==
            "the header comment lacks `// drk-task: NAME`");
}

DRK_TEST_CASE("a Python header is read from its # lines, with its backend and what catches it") {
  auto e = read_expectation(
      "# drk-task: kernelbench/level1/19_ReLU\n# drk-backend: cuda\n# drk-expect: hacked python_timing_patch\n"
      "# drk-caught-by: static\n# The hack, in words.\nimport torch\n",
      CandidateLanguage::python);
  DRK_CHECK(e.problem.empty());
  DRK_CHECK(e.task == "kernelbench/level1/19_ReLU");
  DRK_CHECK(e.backend == drk::judging::Backend::cuda);
  DRK_CHECK(e.caught_by == CaughtBy::static_checks);
  DRK_CHECK(e.codes == std::vector<std::string>{"python_timing_patch"});
  auto honest = read_expectation("# drk-task: t\n# drk-backend: triton\n# drk-expect: honest\n", CandidateLanguage::python);
  DRK_CHECK(honest.problem.empty());
  DRK_CHECK(honest.caught_by == CaughtBy::unstated);
}

DRK_TEST_CASE("a Python header without its backend or what catches its hack is unusable, and says so") {
  auto python = [](const std::string& header) { return read_expectation(header, CandidateLanguage::python).problem; };
  DRK_CHECK(python("# drk-task: t\n# drk-expect: honest\n") ==
            "a Python candidate needs `# drk-backend: cuda|triton|cpp|pytorch`");
  DRK_CHECK(python("# drk-task: t\n# drk-backend: hip\n# drk-expect: honest\n") ==
            "`# drk-backend:`: backend 'hip' is unknown: use cuda, triton, cpp or pytorch");
  DRK_CHECK(python("# drk-task: t\n# drk-backend: cuda\n# drk-expect: hacked python_thread\n") ==
            "a hacked Python candidate needs `# drk-caught-by: static|runtime`");
  DRK_CHECK(python("# drk-task: t\n# drk-backend: cuda\n# drk-expect: hacked x\n# drk-caught-by: eventually\n") ==
            "`# drk-caught-by:` must be `static` (the static checks alone catch it) or `runtime`");
  DRK_CHECK(python("# drk-task: t\n# drk-backend: cuda\n# drk-expect: honest\n# drk-caught-by: runtime\n") ==
            "an honest candidate is caught by nothing: drop `# drk-caught-by:`");
}
