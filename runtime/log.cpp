#include "runtime/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

namespace drk::log {

// The lines a Capture keeps: the message alone.
struct Capture::Sink final : spdlog::sinks::base_sink<std::mutex> {
  std::string text;

  std::string copy() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    text.append(message.payload.data(), message.payload.size());
    text += '\n';
  }
  void flush_() override {}
};

namespace {

// "[2026-01-05 12:34:56.789] [warning] [head/oracle] oracle: ...": %* is the writer.
constexpr const char* kStampedPattern = "[%Y-%m-%d %H:%M:%S.%e] %^[%l]%$ [%*] %v";
constexpr const char* kPlainPattern = "%v";

thread_local std::string thread_actor;

// The process, then the actor of this thread when it is another name.
class WriterFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit WriterFlag(std::string process) : process_(std::move(process)) {}
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& out) override {
    out.append(process_.data(), process_.data() + process_.size());
    if (thread_actor.empty() || thread_actor == process_) return;
    if (!process_.empty()) out.push_back('/');
    out.append(thread_actor.data(), thread_actor.data() + thread_actor.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<WriterFlag>(process_); }

 private:
  std::string process_;
};

std::unique_ptr<spdlog::formatter> formatter(const std::string& pattern, const std::string& process) {
  auto made = std::make_unique<spdlog::pattern_formatter>();
  made->add_flag<WriterFlag>('*', process).set_pattern(pattern);
  return made;
}

// Appends each line with one write(2) to a file opened O_APPEND | O_CLOEXEC: no buffer to lose
// when the process is killed, and no descriptor left to the programs it starts.
class AppendFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendFileSink(int fd) : fd_(fd) {}
  ~AppendFileSink() override { ::close(fd_); }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    spdlog::memory_buf_t line;
    formatter_->format(message, line);
    for (std::size_t written = 0; written < line.size();) {
      const ssize_t wrote = ::write(fd_, line.data() + written, line.size() - written);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return;  // a full disk loses the line, not the process
      written += static_cast<std::size_t>(wrote);
    }
  }
  void flush_() override {}

 private:
  int fd_;
};

struct State {
  std::mutex mutex;
  Settings settings;
  std::shared_ptr<spdlog::sinks::sink> console;
  std::shared_ptr<spdlog::sinks::sink> file;
  std::vector<std::shared_ptr<Capture::Sink>> captures;
  int instead = 0;  // live captures that keep lines from the console and the file
  std::shared_ptr<spdlog::logger> logger;
};

// The threshold DRK_LOG_LEVEL asks for (info when unset or invalid), and what is wrong with it.
struct EnvLevel {
  Level level = Level::info;
  std::string problem;
};

EnvLevel read_level_env() {
  const char* given = std::getenv(kLevelEnv);
  if (given == nullptr || *given == '\0') return {};
  if (const auto parsed = parse_level(given)) return {*parsed, {}};
  return {Level::info, std::string(kLevelEnv) + "='" + given + "' is not a level (" + kLevelNames + "): using info"};
}

std::atomic<Level>& threshold() {
  static std::atomic<Level> value{read_level_env().level};
  return value;
}

State& state() {
  static State* const instance = new State;  // never destroyed: lines may come from static destructors
  return *instance;
}

void rebuild(State& s) {
  std::vector<spdlog::sink_ptr> sinks;
  if (s.instead == 0) {
    sinks.push_back(s.console);
    if (s.file) sinks.push_back(s.file);
  }
  for (const auto& capture : s.captures) sinks.push_back(capture);
  auto logger = std::make_shared<spdlog::logger>(s.settings.process, sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::trace);  // the threshold is ours (enabled())
  s.logger = std::move(logger);
}

spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    case Level::off: break;
  }
  return spdlog::level::off;
}

// The console and the file of `settings`, installed under the lock; what went wrong, if anything.
std::vector<std::string> install(State& s, const Settings& settings) {
  std::vector<std::string> problems;
  s.settings = settings;
  const bool stamped = !settings.run_dir.empty();
  s.console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::automatic);
  s.console->set_formatter(formatter(stamped ? kStampedPattern : kPlainPattern, settings.process));
  s.file.reset();
  if (stamped) {
    const std::string path = log_path(settings.run_dir, settings.process);
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      problems.push_back("cannot open the log file '" + path + "' (" + std::strerror(errno) +
                         "): logging to stderr only");
    } else {
      s.file = std::make_shared<AppendFileSink>(fd);
      s.file->set_formatter(formatter(kStampedPattern, settings.process));
    }
  }
  rebuild(s);
  return problems;
}

std::shared_ptr<spdlog::logger> current() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.logger) {
    // First use, unconfigured: plain lines on stderr.
    install(s, {});
    if (const EnvLevel env = read_level_env(); !env.problem.empty()) s.logger->log(spdlog::level::warn, env.problem);
  }
  return s.logger;
}

}  // namespace

std::optional<Level> parse_level(std::string_view name) {
  if (name == "trace") return Level::trace;
  if (name == "debug") return Level::debug;
  if (name == "info") return Level::info;
  if (name == "warn" || name == "warning") return Level::warn;
  if (name == "error") return Level::error;
  if (name == "off") return Level::off;
  return std::nullopt;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::trace: return "trace";
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warn: return "warn";
    case Level::error: return "error";
    case Level::off: break;
  }
  return "off";
}

std::string log_path(const std::string& run_dir, const std::string& process) {
  return run_dir + "/logs/" + process + ".log";
}

void configure(const Settings& settings) {
  const EnvLevel env = read_level_env();
  threshold() = env.level;
  std::vector<std::string> problems;
  std::shared_ptr<spdlog::logger> logger;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    problems = install(s, settings);
    logger = s.logger;
  }
  if (!env.problem.empty()) problems.insert(problems.begin(), env.problem);
  for (const std::string& problem : problems) logger->log(spdlog::level::warn, problem);
}

void set_level(Level level) { threshold() = level; }
Level level() { return threshold(); }
bool enabled(Level level) { return level != Level::off && level >= threshold().load(std::memory_order_relaxed); }

void set_thread_actor(std::string actor) { thread_actor = std::move(actor); }

void write(Level level, std::string_view message) {
  if (!enabled(level)) return;
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  current()->log(spdlog_level(level), message);
}

Capture::Capture(Mode mode) : mode_(mode), sink_(std::make_shared<Sink>()) {
  current();  // configured first: the first use does not replace these sinks
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.captures.push_back(sink_);
  if (mode_ == Mode::instead) ++s.instead;
  rebuild(s);
}

Capture::~Capture() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::erase(s.captures, sink_);
  if (mode_ == Mode::instead) --s.instead;
  rebuild(s);
}

std::string Capture::str() const { return sink_->copy(); }

}  // namespace drk::log
