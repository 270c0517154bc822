// drk::log: the one logger of every drkernel program (spdlog behind it).
//
//   log::warn() << "oracle: " << count << " evaluation(s) got no result";
//
// writes one line when the statement ends; a line below the threshold is dropped without being
// formatted. Levels, lowest first: trace, debug, info, warn, error (off: nothing). The threshold
// is DRK_LOG_LEVEL (default info; `drk --log-level LEVEL` sets it for the command and the
// processes it starts); set_level() changes it for this process.
//
// Where lines go depends on configure():
//   - not configured, or configured without a run directory (the interactive commands: `drk
//     eval`, `drk tasks`, ...): the message alone on stderr, the same text a person always saw;
//   - configured with a run directory (the processes of a run: `drk run`'s head, each `drk host`,
//     `drk node`): on stderr and appended to RUN_DIR/logs/PROCESS.log, each line with its time,
//     level and writer:  [2026-01-05 12:34:56.789] [warning] [head/oracle] oracle: ...
//     The writer is the process, then the actor whose thread wrote the line when that differs
//     (set_thread_actor; ActorHost names each actor's thread).
// configure() may be called again (`drk run` configures once its run directory is known): later
// lines go where the latest call says. A log file that cannot be opened is said on stderr and
// left out.
//
// Capture keeps the lines written while it lives (the message alone), for tests and for the
// benchmarks that report what a supervisor said.
//
// Thread-safety: every function may be called from any thread; a line is written whole.
// Not async-signal-safe: never log between fork and exec.
#pragma once

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace drk::log {

enum class Level { trace, debug, info, warn, error, off };

// "trace", "debug", "info", "warn" (or "warning"), "error", "off"; none for anything else.
std::optional<Level> parse_level(std::string_view name);
std::string_view level_name(Level level);
inline constexpr const char* kLevelEnv = "DRK_LOG_LEVEL";
inline constexpr const char* kLevelNames = "trace, debug, info, warn, error, off";

struct Settings {
  std::string process;  // the writer's name: "head", "evaluator.0", "node@b"
  std::string run_dir;  // empty: plain lines on stderr only
};

// Also reads the threshold from DRK_LOG_LEVEL again (an invalid value is said, and info used).
void configure(const Settings& settings);
// RUN_DIR/logs/PROCESS.log
std::string log_path(const std::string& run_dir, const std::string& process);

void set_level(Level level);
Level level();
bool enabled(Level level);

// The actor whose handlers run on the calling thread; "" for none.
void set_thread_actor(std::string actor);

// One line at `level` (a trailing newline is dropped).
void write(Level level, std::string_view message);

class Line {
 public:
  explicit Line(Level level) : level_(level) {
    if (enabled(level)) text_.emplace();
  }
  ~Line() {
    if (text_) write(level_, text_->str());
  }
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  template <typename T>
  Line& operator<<(const T& value) {
    if (text_) *text_ << value;
    return *this;
  }

 private:
  Level level_;
  std::optional<std::ostringstream> text_;  // none below the threshold
};

inline Line trace() { return Line(Level::trace); }
inline Line debug() { return Line(Level::debug); }
inline Line info() { return Line(Level::info); }
inline Line warn() { return Line(Level::warn); }
inline Line error() { return Line(Level::error); }

class Capture {
 public:
  enum class Mode {
    also,     // the lines still go to stderr and the log file
    instead,  // while it lives, they go only to captures
  };
  explicit Capture(Mode mode = Mode::also);
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  // Every line kept so far, each ending with a newline.
  std::string str() const;

  struct Sink;

 private:
  Mode mode_;
  std::shared_ptr<Sink> sink_;
};

}  // namespace drk::log
