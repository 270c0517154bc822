// ProgressMeter: how far a long command (`drk verify-corpus`, `drk bench kernelbench`,
// `drk kernelbench import`, `drk archive remeasure`) has come through its items: how many are
// done, how many are left, the rate so far and an estimate of the time left.
//
// It prints a line to its stream at most once per interval (about a second), when an item is
// done, and a final line from finish() (or the destructor). On a terminal the line is rewritten in
// place (carriage return); elsewhere (a log file, a pipe) each is a plain line of its own.
//
// Thread-safety: add_done(), snapshot() and line() from any thread (one mutex); the stream is
// written under it. Ownership: the stream and the clock outlive the meter. Errors: none.
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>

namespace drk::runtime {

// The meter's time, a seam so that tests move it without sleeping.
class ProgressClock {
 public:
  virtual ~ProgressClock() = default;
  virtual std::chrono::steady_clock::time_point now() const = 0;
};

// std::chrono::steady_clock.
const ProgressClock& steady_progress_clock();

struct ProgressMeterOptions {
  std::chrono::milliseconds interval{1000};  // the least time between two lines
  bool terminal = false;                     // rewrite one line in place
  const ProgressClock* clock = nullptr;      // nullptr: steady_progress_clock()
};

// For a command's meter on stderr: terminal when stderr is one.
ProgressMeterOptions stderr_progress_options();

// Where the meter stands.
struct ProgressSnapshot {
  size_t done = 0;
  size_t total = 0;
  double elapsed_s = 0;
  std::optional<double> per_second;  // once an item is done and time has passed
  std::optional<double> seconds_left;
};

// "4.2 s", "75 s", "3.5 min", "2.1 h".
std::string duration_text(double seconds);

class ProgressMeter {
 public:
  // `label` starts each line ("drk verify-corpus"); `items` names what is counted ("files").
  // `out` may be nullptr: the meter then only counts (a command that prints its own lines reads
  // snapshot()).
  ProgressMeter(std::string label, std::string items, size_t total, std::ostream* out,
                ProgressMeterOptions options = {});
  ~ProgressMeter();
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // `count` more items are done; prints when the interval has passed since the last line.
  void add_done(size_t count = 1);
  // Prints the final line ("... 80 of 80 files done in 72 s (1.1 per s)") once.
  void finish();
  // Writes `text` (a command's own line about an item, with its newline) to `stream`, above the
  // meter's line: on a terminal the meter's line is cleared first and drawn again after, so that
  // the two do not run into each other.
  void note(std::ostream& stream, const std::string& text);

  ProgressSnapshot snapshot() const;
  // "drk verify-corpus: 12 of 80 files done, 68 left, 0.9 per s, about 75 s left"
  std::string line() const;

 private:
  ProgressSnapshot snapshot_locked() const;
  std::string line_locked() const;
  void print_locked(const std::string& text, bool last);

  const std::string label_, items_;
  const size_t total_;
  std::ostream* const out_;
  const ProgressMeterOptions options_;
  const ProgressClock& clock_;
  const std::chrono::steady_clock::time_point started_;
  mutable std::mutex mutex_;
  size_t done_ = 0;
  std::optional<std::chrono::steady_clock::time_point> printed_;
  bool finished_ = false;
  std::string shown_;  // the line on the terminal now ("" when none)
};

}  // namespace drk::runtime
