#include "runtime/supervision/warm_spare.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "runtime/log.h"

#include "base/unique_fd.h"

namespace drk::runtime {

Result<std::optional<std::vector<std::string>>> await_spare_orders(int fd) {
  std::string received;
  char chunk[4096];
  while (true) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return make_error(Errc::io_error, std::string("a spare cannot read its orders: ") + std::strerror(errno));
    if (got == 0) break;
    received.append(chunk, static_cast<std::size_t>(got));
  }
  if (const UniqueFd null_input(::open("/dev/null", O_RDONLY | O_CLOEXEC)); null_input) ::dup2(null_input.get(), fd);
  if (received.empty()) return std::optional<std::vector<std::string>>{};
  // Complete orders end with an empty argument: "a\0b\0\0".
  if (received.size() < 2 || received.compare(received.size() - 2, 2, std::string_view("\0\0", 2)) != 0) {
    return make_error(Errc::parse_error, "a spare's orders ended before their last argument (" +
                                             std::to_string(received.size()) + " bytes): the launcher died mid-write");
  }
  std::vector<std::string> argv;
  for (std::size_t begin = 0; begin + 1 < received.size();) {
    const std::size_t end = received.find('\0', begin);
    argv.emplace_back(received, begin, end - begin);
    begin = end + 1;
  }
  return std::optional<std::vector<std::string>>(std::move(argv));
}

namespace {

// Writes `command_line` over the process's argument strings, which the kernel shows as
// /proc/PID/cmdline: [argv[0], end of the last argument), NUL-separated, the rest NULs.
void show_command_line(int argc, char** argv, const std::vector<std::string>& command_line) {
  char* const begin = argv[0];
  char* const end = argv[argc - 1] + std::strlen(argv[argc - 1]) + 1;
  std::string shown;
  for (const auto& argument : command_line) {
    shown += argument;
    shown += '\0';
  }
  const std::size_t room = static_cast<std::size_t>(end - begin);
  std::memset(begin, 0, room);
  std::memcpy(begin, shown.data(), std::min(shown.size(), room - 1));
}

}  // namespace

std::vector<std::string> command_line_or_orders(int argc, char** argv) {
  if (argc != 3 || argv[1] != kSpareCommand) return std::vector<std::string>(argv, argv + argc);
  auto orders = await_spare_orders(STDIN_FILENO);
  if (!orders) {
    log::error() << argv[0] << " spare: " << orders.error().message;
    std::exit(1);
  }
  if (!*orders || (*orders)->empty()) std::exit(0);
  show_command_line(argc, argv, **orders);
  return std::move(**orders);
}

Status send_spare_orders(int fd, const std::vector<std::string>& argv) {
  std::string orders;
  for (const auto& argument : argv) {
    orders += argument;
    orders += '\0';
  }
  orders += '\0';
  for (std::size_t sent = 0; sent < orders.size();) {
    const ssize_t wrote = ::send(fd, orders.data() + sent, orders.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return make_error(Errc::io_error, std::string("cannot hand a spare its orders: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(wrote);
  }
  return {};
}

}  // namespace drk::runtime
