#include "actors/evaluator/sandbox_channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <capnp/serialize.h>

namespace drk::evaluator {
namespace {

Status write_all(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == EPIPE) return make_error(Errc::peer_unavailable, "the other end of the sandbox pipe is closed");
      return make_error(Errc::io_error, std::string("sandbox pipe write failed: ") + std::strerror(errno));
    }
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

Status read_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline, bool has_deadline) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    int wait_ms = -1;
    if (has_deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() < 0) return make_error(Errc::timeout, "no reply from the sandbox before the deadline");
      wait_ms = static_cast<int>(left.count());
    }
    pollfd descriptor{fd, POLLIN, 0};
    int ready = poll(&descriptor, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return make_error(Errc::io_error, std::string("poll failed: ") + std::strerror(errno));
    if (ready == 0) return make_error(Errc::timeout, "no reply from the sandbox before the deadline");
    ssize_t n = read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(Errc::io_error, std::string("sandbox pipe read failed: ") + std::strerror(errno));
    if (n == 0) return make_error(Errc::peer_unavailable, "the other end of the sandbox pipe is closed");
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

Status write_frame(int fd, capnp::MessageBuilder& message) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  if (bytes.size() > kMaxFrameBytes) return make_error(Errc::invalid_argument, "sandbox message over 1 MiB");
  uint32_t size = static_cast<uint32_t>(bytes.size());
  unsigned char prefix[4] = {static_cast<unsigned char>(size), static_cast<unsigned char>(size >> 8),
                             static_cast<unsigned char>(size >> 16), static_cast<unsigned char>(size >> 24)};
  if (auto s = write_all(fd, prefix, sizeof prefix); !s) return s;
  return write_all(fd, bytes.begin(), bytes.size());
}

Result<kj::Array<capnp::word>> read_frame(int fd, int timeout_ms) {
  bool has_deadline = timeout_ms >= 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(has_deadline ? timeout_ms : 0);
  unsigned char prefix[4];
  if (auto s = read_all(fd, prefix, sizeof prefix, deadline, has_deadline); !s) return s.error();
  uint32_t size = uint32_t{prefix[0]} | (uint32_t{prefix[1]} << 8) | (uint32_t{prefix[2]} << 16) |
                  (uint32_t{prefix[3]} << 24);
  if (size == 0 || size > kMaxFrameBytes || size % sizeof(capnp::word) != 0)
    return make_error(Errc::protocol_error, "sandbox frame of " + std::to_string(size) + " bytes is malformed");
  auto words = kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  if (auto s = read_all(fd, words.begin(), size, deadline, has_deadline); !s) return s.error();
  return words;
}

capnp::ReaderOptions frame_reader_options() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 4 * (kMaxFrameBytes / sizeof(capnp::word));
  options.nestingLimit = 16;
  return options;
}

}  // namespace drk::evaluator
