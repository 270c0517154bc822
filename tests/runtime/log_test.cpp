// The logger (runtime/log.h): the threshold, the run's log file with the writer and level of
// each line, configuring again, and captures.
#include "runtime/log.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::log {
namespace {

using testing::RunDir;

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Back to plain lines at the default threshold when a test ends, whatever it configured.
struct Restore {
  ~Restore() {
    ::unsetenv(kLevelEnv);
    configure({});
  }
};

DRK_TEST_CASE("levels: a line below the threshold is dropped, one at or above it is written") {
  Restore restore;
  Capture capture(Capture::Mode::instead);
  set_level(Level::warn);
  info() << "below the threshold " << 1;
  warn() << "at the threshold " << 2;
  error() << "above it " << 3;
  DRK_CHECK(capture.str() == "at the threshold 2\nabove it 3\n");
  DRK_CHECK_FALSE(enabled(Level::info));
  DRK_CHECK(enabled(Level::error));
  set_level(Level::off);
  error() << "nothing at all";
  DRK_CHECK(capture.str() == "at the threshold 2\nabove it 3\n");
}

DRK_TEST_CASE("level names, and DRK_LOG_LEVEL read by configure") {
  Restore restore;
  DRK_CHECK(parse_level("debug") == Level::debug);
  DRK_CHECK(parse_level("warning") == Level::warn);
  DRK_CHECK_FALSE(parse_level("loud").has_value());
  for (Level level : {Level::trace, Level::debug, Level::info, Level::warn, Level::error, Level::off}) {
    DRK_CHECK(parse_level(level_name(level)) == level);
  }
  ::setenv(kLevelEnv, "error", 1);
  configure({});
  DRK_CHECK(level() == Level::error);
  Capture capture(Capture::Mode::instead);
  ::setenv(kLevelEnv, "loud", 1);
  configure({});
  DRK_CHECK(level() == Level::info);
  DRK_CHECK_MESSAGE(capture.str().find("DRK_LOG_LEVEL='loud' is not a level") != std::string::npos, capture.str());
}

DRK_TEST_CASE("a process of a run writes RUN_DIR/logs/PROCESS.log with the time, level, process and actor") {
  Restore restore;
  RunDir dir;
  configure({"evaluator.0", dir.path().string()});
  set_level(Level::info);
  warn() << "evaluator.0: a warning";
  debug() << "a debug line below the threshold";
  std::thread([] {
    set_thread_actor("oracle");
    info() << "from the oracle's thread";
  }).join();
  const std::string path = log_path(dir.path().string(), "evaluator.0");
  DRK_CHECK(path == dir.file("logs/evaluator.0.log"));
  const std::string text = dir.read("logs/evaluator.0.log");
  DRK_CHECK_MESSAGE(text.find("] [warning] [evaluator.0] evaluator.0: a warning\n") != std::string::npos, text);
  DRK_CHECK_MESSAGE(text.find("] [info] [evaluator.0/oracle] from the oracle's thread\n") != std::string::npos, text);
  DRK_CHECK(text.find("a debug line") == std::string::npos);
  DRK_CHECK(text.rfind("[20", 0) == 0);  // "[2026-01-05 12:34:56.789] ..."

  // Configured again, as `drk run` does once it knows its run directory: the same file is
  // appended to, no line is written twice, and a second process name gets its own file.
  configure({"evaluator.0", dir.path().string()});
  warn() << "after configuring again";
  configure({"head", dir.path().string()});
  warn() << "the head's line";
  const std::string again = dir.read("logs/evaluator.0.log");
  DRK_CHECK(occurrences(again, "evaluator.0: a warning") == 1);
  DRK_CHECK(occurrences(again, "after configuring again") == 1);
  DRK_CHECK(again.find("the head's line") == std::string::npos);
  DRK_CHECK(dir.read("logs/head.log").find("] [warning] [head] the head's line") != std::string::npos);
}

DRK_TEST_CASE("a capture keeps lines from every thread; an instead capture keeps them from the file") {
  Restore restore;
  RunDir dir;
  configure({"head", dir.path().string()});
  {
    Capture capture(Capture::Mode::instead);
    std::thread writers[4];
    for (int t = 0; t < 4; ++t) {
      writers[t] = std::thread([t] {
        for (int i = 0; i < 50; ++i) warn() << "thread " << t << " line " << i;
      });
    }
    for (auto& writer : writers) writer.join();
    DRK_CHECK(occurrences(capture.str(), "\n") == 200);
    DRK_CHECK(occurrences(capture.str(), "thread 3 line 49\n") == 1);
  }
  warn() << "after the capture";
  const std::string text = dir.read("logs/head.log");
  DRK_CHECK(text.find("thread 0 line 0") == std::string::npos);
  DRK_CHECK(text.find("after the capture") != std::string::npos);
}

}  // namespace
}  // namespace drk::log
