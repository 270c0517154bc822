#include "runtime/progress_meter.h"

#include <unistd.h>

#include <cstdio>
#include <ostream>

namespace drk::runtime {
namespace {

class SteadyProgressClock final : public ProgressClock {
 public:
  std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::now(); }
};

std::string with_digits(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace

const ProgressClock& steady_progress_clock() {
  static const SteadyProgressClock clock;
  return clock;
}

ProgressMeterOptions stderr_progress_options() {
  ProgressMeterOptions options;
  options.terminal = ::isatty(STDERR_FILENO) == 1;
  return options;
}

std::string duration_text(double seconds) {
  if (seconds < 10) return with_digits(seconds, 1) + " s";
  if (seconds < 120) return with_digits(seconds, 0) + " s";
  if (seconds < 7200) return with_digits(seconds / 60, 1) + " min";
  return with_digits(seconds / 3600, 1) + " h";
}

ProgressMeter::ProgressMeter(std::string label, std::string items, size_t total, std::ostream* out,
                             ProgressMeterOptions options)
    : label_(std::move(label)),
      items_(std::move(items)),
      total_(total),
      out_(out),
      options_(options),
      clock_(options.clock ? *options.clock : steady_progress_clock()),
      started_(clock_.now()) {}

ProgressMeter::~ProgressMeter() { finish(); }

void ProgressMeter::add_done(size_t count) {
  std::lock_guard lock(mutex_);
  done_ += count;
  if (finished_ || !out_) return;
  const auto now = clock_.now();
  if (printed_ && now - *printed_ < options_.interval) return;
  printed_ = now;
  print_locked(line_locked(), false);
}

void ProgressMeter::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!out_) return;
  const ProgressSnapshot now = snapshot_locked();
  std::string text = label_ + ": " + std::to_string(now.done) + " of " + std::to_string(total_) + " " + items_ +
                     " done in " + duration_text(now.elapsed_s);
  if (now.per_second) text += " (" + with_digits(*now.per_second, *now.per_second < 10 ? 2 : 0) + " per s)";
  print_locked(text, true);
}

void ProgressMeter::note(std::ostream& stream, const std::string& text) {
  std::lock_guard lock(mutex_);
  const bool redraw = out_ && options_.terminal && !shown_.empty();
  if (redraw) *out_ << "\r\x1b[K" << std::flush;
  stream << text << std::flush;
  if (redraw) *out_ << shown_ << std::flush;
}

ProgressSnapshot ProgressMeter::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_locked();
}

std::string ProgressMeter::line() const {
  std::lock_guard lock(mutex_);
  return line_locked();
}

ProgressSnapshot ProgressMeter::snapshot_locked() const {
  ProgressSnapshot now;
  now.done = done_;
  now.total = total_;
  now.elapsed_s = std::chrono::duration<double>(clock_.now() - started_).count();
  if (done_ > 0 && now.elapsed_s > 0) {
    now.per_second = static_cast<double>(done_) / now.elapsed_s;
    const size_t left = total_ > done_ ? total_ - done_ : 0;
    now.seconds_left = static_cast<double>(left) / *now.per_second;
  }
  return now;
}

std::string ProgressMeter::line_locked() const {
  const ProgressSnapshot now = snapshot_locked();
  const size_t left = total_ > now.done ? total_ - now.done : 0;
  std::string text = label_ + ": " + std::to_string(now.done) + " of " + std::to_string(total_) + " " + items_ +
                     " done, " + std::to_string(left) + " left";
  if (now.per_second) {
    text += ", " + with_digits(*now.per_second, *now.per_second < 10 ? 2 : 0) + " per s";
    if (left > 0) text += ", about " + duration_text(*now.seconds_left) + " left";
  } else if (left > 0) {
    text += ", time left not known yet";
  }
  return text;
}

void ProgressMeter::print_locked(const std::string& text, bool last) {
  if (options_.terminal) {
    // Back to the line's start and clear it, so that a shorter line leaves nothing behind.
    *out_ << '\r' << text << "\x1b[K";
    if (last) *out_ << '\n';
    shown_ = last ? "" : text;
  } else {
    *out_ << text << '\n';
  }
  out_->flush();
}

}  // namespace drk::runtime
