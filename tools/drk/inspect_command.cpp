// `drk inspect ADDRESS [--json]` and `drk top ADDRESS`: the actor tree of a live run, once or
// refreshed every second (docs/inspection.md).
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>

#include "runtime/inspection_format.h"
#include "runtime/inspection_server.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

constexpr std::chrono::milliseconds kAnswerTimeout{2000};
constexpr int kRefreshMs = 1000;

struct InspectArgs {
  std::string address;
  bool json = false;
  double hung_after_seconds = runtime::kDefaultHungAfterSeconds;
  std::string keys;  // CURVE key directory, for a multi-node run's head
  std::string as;    // the identity in it to connect as
  bool help = false;
};

std::string usage(const std::string& command) {
  const bool top = command == "top";
  return std::string("usage: drk ") + command + " ADDRESS" + (top ? "" : " [--json]") +
         " [--hung-after SECONDS] [--keys DIR --as NAME]\n"
         "\n" +
         (top ? "Shows the actors of a live run, refreshed every second, until the run ends\n"
                "(q or Ctrl-C quits).\n"
              : "Shows the actors of a live run once: per actor its state, process and pid,\n"
                "messages handled and per second, handler times, mailbox depth, dead letters;\n"
                "per process its restarts and their causes.\n") +
         "\n"
         "ADDRESS is the run directory of a running `drk run` (it holds inspect.endpoint), or\n"
         "an inspection endpoint (ipc://PATH, tcp://HOST:PORT; a multi-node run's head answers\n"
         "at its network.listen address).\n"
         "\n"
         "options:\n" +
         (top ? "" : "  --json                one JSON object (docs/inspection.md names its fields)\n") +
         "  --hung-after SECONDS  a handler running this long is shown as hung (default 30,\n"
         "                        the topology's supervision.hung_handler_s default)\n"
         "  --keys DIR --as NAME  connect with CURVE as identity NAME of key directory DIR\n"
         "                        (DIR/NAME.key, DIR/head.pub): for a run with network.keys\n"
         "  --help                show this text\n";
}

Result<InspectArgs> parse(const Args& args, bool allow_json) {
  InspectArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
    } else if (arg == "--json" && allow_json) {
      parsed.json = true;
    } else if (arg == "--hung-after") {
      const std::string value = i + 1 < args.size() ? args[++i] : "";
      double seconds = -1;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (error != std::errc() || end != value.data() + value.size() || seconds < 0) {
        return make_error(Errc::invalid_argument, "--hung-after needs a number of seconds, e.g. --hung-after 30");
      }
      parsed.hung_after_seconds = seconds;
    } else if (arg == "--keys" || arg == "--as") {
      if (i + 1 == args.size()) return make_error(Errc::invalid_argument, arg + " needs a value");
      (arg == "--keys" ? parsed.keys : parsed.as) = args[++i];
    } else if (arg.rfind("-", 0) == 0) {
      return make_error(Errc::invalid_argument, "unknown option '" + arg + "'");
    } else if (parsed.address.empty()) {
      parsed.address = arg;
    } else {
      return make_error(Errc::invalid_argument, "one address at a time: '" + parsed.address + "' and '" + arg + "'");
    }
  }
  if (parsed.address.empty() && !parsed.help) {
    return make_error(Errc::invalid_argument, "which run? e.g. drk inspect runs/quickstart");
  }
  if (parsed.keys.empty() != parsed.as.empty()) {
    return make_error(Errc::invalid_argument, "--keys and --as go together, e.g. --keys keys/ --as ops");
  }
  return parsed;
}

// The client for the parsed address, with CURVE keys when given.
Result<runtime::InspectionClient> make_client(const InspectArgs& parsed) {
  auto endpoint = runtime::resolve_inspect_address(parsed.address);
  if (!endpoint) return endpoint.error();
  if (parsed.keys.empty()) return runtime::InspectionClient(*endpoint);
  auto own = runtime::read_key_pair(parsed.keys, parsed.as);
  if (!own) return own.error();
  auto head = runtime::read_public_key(parsed.keys, "head");
  if (!head) return head.error();
  return runtime::InspectionClient(*endpoint, runtime::CurveClientKeys{*own, *head});
}

// Parses, prints usage or an argument error; returns the exit code when the command is done.
std::optional<int> handle_arguments(const std::string& command, const Args& args, InspectArgs& parsed) {
  auto result = parse(args, command == "inspect");
  if (!result) {
    std::cerr << "drk " << command << ": " << result.error().message << "\n\n" << usage(command);
    return 2;
  }
  parsed = std::move(*result);
  if (parsed.help) {
    std::cout << usage(command);
    return 0;
  }
  return std::nullopt;
}

volatile std::sig_atomic_t interrupted = 0;

void on_interrupt(int) { interrupted = 1; }

// Keys reach the program one at a time, unechoed, while it lives; Ctrl-C still signals.
class RawTerminal {
 public:
  RawTerminal() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  termios saved_{};
  bool active_ = false;
};

// Waits up to `timeout_ms` for q (true) or a signal; other keys are ignored.
bool wait_for_quit(int timeout_ms) {
  pollfd input{STDIN_FILENO, POLLIN, 0};
  const int ready = ::poll(&input, ::isatty(STDIN_FILENO) ? 1 : 0, timeout_ms);
  if (ready <= 0) return interrupted != 0;
  char key = 0;
  while (::read(STDIN_FILENO, &key, 1) == 1) {
    if (key == 'q' || key == 'Q') return true;
  }
  return interrupted != 0;
}

}  // namespace

int cmd_inspect(const Args& args) {
  InspectArgs parsed;
  if (auto done = handle_arguments("inspect", args, parsed)) return *done;
  auto client = make_client(parsed);
  if (!client) {
    std::cerr << "drk inspect: " << client.error().message << "\n";
    return 1;
  }
  auto view = client->fetch(kAnswerTimeout);
  if (!view) {
    std::cerr << "drk inspect: " << view.error().message << "\n";
    return 1;
  }
  std::cout << (parsed.json ? runtime::format_json(*view, parsed.hung_after_seconds)
                            : runtime::format_table(*view, parsed.hung_after_seconds));
  return 0;
}

int cmd_top(const Args& args) {
  InspectArgs parsed;
  if (auto done = handle_arguments("top", args, parsed)) return *done;
  auto client = make_client(parsed);
  if (!client) {
    std::cerr << "drk top: " << client.error().message << "\n";
    return 1;
  }
  struct sigaction action {};
  action.sa_handler = on_interrupt;  // no SA_RESTART: the wait for a key ends at once
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  RawTerminal terminal;
  bool shown = false;
  while (interrupted == 0) {
    auto view = client->fetch(kAnswerTimeout);
    if (!view) {
      if (interrupted != 0) break;
      if (!shown) {
        std::cerr << "drk top: " << view.error().message << "\n";
        return 1;
      }
      std::cout << "\ndrk top: the run ended (" << view.error().message << ")\n";
      return 0;
    }
    std::cout << "\x1b[H\x1b[2J" << runtime::format_table(*view, parsed.hung_after_seconds)
              << "\nq or Ctrl-C quits\n"
              << std::flush;
    shown = true;
    if (wait_for_quit(kRefreshMs)) break;
    // A run directory loses its inspect.endpoint when the run ends: no need to wait for a timeout.
    if (parsed.address.find("://") == std::string::npos && !runtime::resolve_inspect_address(parsed.address)) {
      std::cout << "\ndrk top: the run ended\n";
      return 0;
    }
  }
  std::cout << "\n";
  return 0;
}

}  // namespace drk::tools
