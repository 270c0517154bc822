// UniqueFd: the one owner of a file descriptor (RAII): closed when the owner goes, moved never
// copied. open_pipe() and open_socket_pair() make two at once, each end owned from the start.
//
// Thread-safety: a plain value; one owner thread. Errors: UniqueFd has none (close(2)'s result is
// ignored, as nothing useful can follow a failed close of a descriptor nobody else holds); the
// pairs return io_error naming what they were for when the kernel refuses (descriptors used up).
// Code between fork and exec (or _exit) in a child keeps raw descriptors: closing them there must
// stay async-signal-safe, and the parent's owners must not run their destructors twice.
#pragma once

#include <unistd.h>

#include <string_view>
#include <utility>

#include "base/result.h"

namespace drk {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct PipeEnds {
  UniqueFd read, write;
};

// pipe2(O_CLOEXEC); `purpose` names the pipe in the error ("the sandbox's requests").
Result<PipeEnds> open_pipe(std::string_view purpose);

struct SocketPairEnds {
  UniqueFd ours, theirs;
};

// socketpair(AF_UNIX, type); `type` carries SOCK_CLOEXEC where the ends must not be inherited.
Result<SocketPairEnds> open_socket_pair(int type, std::string_view purpose);

}  // namespace drk
