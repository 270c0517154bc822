// The Python hack corpus (tests/hacks/python/, docs/verification.md "Python static checks"):
// every file's header is usable; the static checks alone fail every hack that declares
// `drk-caught-by: static` with each declared code, and fail no runtime hack (whose declaration
// says that the runtime's checks are what catch it) and no honest candidate, whose declared
// static warnings they report.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "judging/python_static_check.h"
#include "tests/doctest_drk.h"
#include "tools/drk/corpus_header.h"

namespace {

namespace fs = std::filesystem;
using drk::judging::PythonFinding;
using drk::judging::Severity;
using drk::tools::CaughtBy;

fs::path corpus_directory() {
  const char* source = std::getenv("DRK_SOURCE_DIR");
  return fs::path(source != nullptr ? source : ".") / "tests" / "hacks" / "python";
}

std::vector<fs::path> corpus_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(corpus_directory()))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> codes_of(const std::vector<PythonFinding>& findings, Severity severity) {
  std::vector<std::string> out;
  for (const auto& finding : findings)
    if (finding.severity == severity) out.push_back(finding.code);
  return out;
}

bool contains(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

std::string joined(const std::vector<std::string>& codes) {
  std::string text;
  for (const auto& code : codes) text += (text.empty() ? "" : " ") + code;
  return text.empty() ? "none" : text;
}

}  // namespace

DRK_TEST_CASE("every Python corpus file has a usable header, and the static checks judge it as it declares") {
  const auto files = corpus_files();
  DRK_REQUIRE_MESSAGE(files.size() >= 30, ("the corpus at " + corpus_directory().string() + " is missing files"));
  int static_hacks = 0, runtime_hacks = 0, honest = 0;
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    const std::string source = drk::tools::read_source(file);
    const auto expected = drk::tools::read_expectation(source, drk::tools::language_of(file));
    DRK_CHECK_MESSAGE(expected.problem.empty(), (name + ": " + expected.problem));
    if (!expected.problem.empty()) continue;
    const bool named_honest = name.rfind("honest_", 0) == 0;
    DRK_CHECK_MESSAGE(expected.hacked != named_honest, (name + ": honest_* files and only they declare `honest`"));
    const auto findings = drk::judging::python_static_findings(source, *expected.backend);
    const auto failed = codes_of(findings, Severity::failure);
    const auto warned = codes_of(findings, Severity::warning);
    if (!expected.hacked) {
      ++honest;
      DRK_CHECK_MESSAGE(failed.empty(), (name + ": an honest candidate fails " + joined(failed)));
      for (const auto& code : expected.codes)
        if (code.rfind("python_", 0) == 0)
          DRK_CHECK_MESSAGE(contains(warned, code),
                            (name + ": declared warning " + code + " not reported; got " + joined(warned)));
    } else if (expected.caught_by == CaughtBy::static_checks) {
      ++static_hacks;
      for (const auto& code : expected.codes)
        DRK_CHECK_MESSAGE(contains(failed, code), (name + ": " + code + " must fail; failed: " + joined(failed)));
    } else {
      ++runtime_hacks;
      DRK_CHECK_MESSAGE(failed.empty(), (name + ": declared caught at run time, but the static checks fail " +
                                            joined(failed) + " (declare it `static`)"));
    }
  }
  DRK_CHECK(static_hacks > 0);
  DRK_CHECK(runtime_hacks > 0);
  DRK_CHECK(honest > 0);
}
