#include "runtime/progress_meter.h"

#include <sstream>
#include <string>

#include "tests/doctest_drk.h"

namespace {

using namespace std::chrono_literals;

// A clock the test moves by hand.
class ManualClock final : public drk::runtime::ProgressClock {
 public:
  std::chrono::steady_clock::time_point now() const override { return now_; }
  void advance(std::chrono::milliseconds by) { now_ += by; }

 private:
  std::chrono::steady_clock::time_point now_{};
};

size_t lines_in(const std::string& text) {
  size_t count = 0;
  for (char c : text) count += c == '\n' ? 1 : 0;
  return count;
}

}  // namespace

DRK_TEST_CASE("the meter says what is done, what is left, the rate and the time left") {
  ManualClock clock;
  std::ostringstream out;
  drk::runtime::ProgressMeter meter("drk verify-corpus", "files", 10, &out, {.clock = &clock});
  DRK_CHECK(meter.line() == "drk verify-corpus: 0 of 10 files done, 10 left, time left not known yet");
  clock.advance(2000ms);
  meter.add_done(4);  // 2 per second: 6 left take 3 s
  const auto now = meter.snapshot();
  DRK_CHECK(now.done == 4);
  DRK_CHECK(now.per_second.value_or(0) == doctest::Approx(2.0));
  DRK_CHECK(now.seconds_left.value_or(0) == doctest::Approx(3.0));
  DRK_CHECK(out.str() == "drk verify-corpus: 4 of 10 files done, 6 left, 2.00 per s, about 3.0 s left\n");
}

DRK_TEST_CASE("the meter prints at most one line per interval, then a final line") {
  ManualClock clock;
  std::ostringstream out;
  {
    drk::runtime::ProgressMeter meter("drk archive remeasure", "evaluations", 6, &out, {.clock = &clock});
    meter.add_done();  // the first line at once
    clock.advance(300ms);
    meter.add_done();  // within the second: no line
    meter.add_done();
    DRK_CHECK(lines_in(out.str()) == 1);
    clock.advance(800ms);
    meter.add_done();  // 1.1 s after the first line
    DRK_CHECK(lines_in(out.str()) == 2);
    meter.add_done(2);
  }  // the destructor finishes
  DRK_CHECK(lines_in(out.str()) == 3);
  DRK_CHECK(out.str().find("drk archive remeasure: 6 of 6 evaluations done in 1.1 s") != std::string::npos);
  DRK_CHECK(out.str().find('\r') == std::string::npos);
}

DRK_TEST_CASE("on a terminal the meter rewrites one line and ends it with the final one") {
  ManualClock clock;
  std::ostringstream out;
  drk::runtime::ProgressMeter meter("import", "problems", 2, &out, {.terminal = true, .clock = &clock});
  clock.advance(1000ms);
  meter.add_done();
  meter.finish();
  meter.finish();  // once only
  DRK_CHECK(out.str() ==
            "\rimport: 1 of 2 problems done, 1 left, 1.00 per s, about 1.0 s left\x1b[K"
            "\rimport: 1 of 2 problems done in 1.0 s (1.00 per s)\x1b[K\n");
}

DRK_TEST_CASE("a meter without a stream only counts") {
  ManualClock clock;
  drk::runtime::ProgressMeter meter("bench", "candidates", 3, nullptr, {.clock = &clock});
  clock.advance(3000ms);
  meter.add_done(3);
  DRK_CHECK(meter.snapshot().seconds_left.value_or(-1) == 0);
  DRK_CHECK(drk::runtime::duration_text(75) == "75 s");
  DRK_CHECK(drk::runtime::duration_text(210) == "3.5 min");
}

DRK_TEST_CASE("a command's own line goes above the meter's line, which is drawn again on a terminal") {
  ManualClock clock;
  std::ostringstream terminal;
  drk::runtime::ProgressMeter meter("import", "problems", 2, &terminal, {.terminal = true, .clock = &clock});
  meter.note(terminal, "[0/2] nothing shown yet\n");
  clock.advance(1000ms);
  meter.add_done();
  terminal.str("");
  meter.note(terminal, "[1/2] relu ok\n");
  DRK_CHECK(terminal.str() == "\r\x1b[K[1/2] relu ok\nimport: 1 of 2 problems done, 1 left, 1.00 per s, about 1.0 s left");

  std::ostringstream log, items;
  drk::runtime::ProgressMeter plain("import", "problems", 2, &log, {.clock = &clock});
  plain.add_done();
  plain.note(items, "[1/2] relu ok\n");
  DRK_CHECK(items.str() == "[1/2] relu ok\n");
  DRK_CHECK(log.str().find('\x1b') == std::string::npos);
}
