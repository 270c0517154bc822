// `drk inspect ADDRESS [--json]` and `drk top ADDRESS`: the actor tree of a live run, once or
// refreshed every second (docs/inspection.md).
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/inspection/inspection_format.h"
#include "runtime/inspection/inspection_server.h"
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
};

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

int inspect(const InspectArgs& parsed) {
  auto client = make_client(parsed);
  if (!client) {
    log::error() << "drk inspect: " << client.error().message;
    return 1;
  }
  auto view = client->fetch(kAnswerTimeout);
  if (!view) {
    log::error() << "drk inspect: " << view.error().message;
    return 1;
  }
  std::cout << (parsed.json ? runtime::format_json(*view, parsed.hung_after_seconds)
                            : runtime::format_table(*view, parsed.hung_after_seconds));
  return 0;
}

int top(const InspectArgs& parsed) {
  auto client = make_client(parsed);
  if (!client) {
    log::error() << "drk top: " << client.error().message;
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
        log::error() << "drk top: " << view.error().message;
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

// The options `drk inspect` and `drk top` share.
CLI::App* add_inspect_options(CLI::App& command, InspectArgs& args) {
  command
      .add_option("ADDRESS", args.address,
                  "the run directory of a running `drk run` (it holds inspect.endpoint), or an\n"
                  "inspection endpoint (ipc://PATH, tcp://HOST:PORT; a multi-node run's head\n"
                  "answers at its network.listen address)")
      ->required()
      ->type_name("");
  command
      .add_option("--hung-after", args.hung_after_seconds,
                  "a handler running this long is shown as hung (default 30,\n"
                  "the topology's supervision.hung_handler_s default)")
      ->type_name("SECONDS")
      ->check(runtime::at_least(0));
  CLI::Option* keys = command.add_option("--keys", args.keys,
                                         "connect with CURVE as identity NAME (--as) of key directory DIR\n"
                                         "(DIR/NAME.key, DIR/head.pub): for a run with network.keys")
                          ->type_name("DIR");
  CLI::Option* as = command.add_option("--as", args.as, "the identity of --keys to connect as")->type_name("NAME");
  keys->needs(as);
  as->needs(keys);
  return &command;
}

}  // namespace

void add_inspect_commands(CLI::App& drk, Actions& actions) {
  auto inspect_args = std::make_shared<InspectArgs>();
  CLI::App* inspect_command = add_inspect_options(
      *drk.add_subcommand("inspect",
                          "the actors of a live run, once\n"
                          "\n"
                          "Shows the actors of a live run once: per actor its state, process and pid,\n"
                          "messages handled and per second, handler times, mailbox depth, dead letters;\n"
                          "per process its restarts and their causes."),
      *inspect_args);
  inspect_command->add_flag("--json", inspect_args->json, "one JSON object (docs/inspection.md names its fields)");
  actions[inspect_command] = [inspect_args] { return inspect(*inspect_args); };
  auto top_args = std::make_shared<InspectArgs>();
  CLI::App* top_command = add_inspect_options(
      *drk.add_subcommand("top",
                          "the same, refreshed every second\n"
                          "\n"
                          "Shows the actors of a live run, refreshed every second, until the run ends\n"
                          "(q or Ctrl-C quits)."),
      *top_args);
  actions[top_command] = [top_args] { return top(*top_args); };
}

}  // namespace drk::tools
