#include "base/unique_fd.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace drk {

Result<PipeEnds> open_pipe(std::string_view purpose) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    return make_error(Errc::io_error, "cannot make a pipe for " + std::string(purpose) + ": " + std::strerror(errno));
  return PipeEnds{UniqueFd(ends[0]), UniqueFd(ends[1])};
}

Result<SocketPairEnds> open_socket_pair(int type, std::string_view purpose) {
  int ends[2];
  if (::socketpair(AF_UNIX, type, 0, ends) != 0)
    return make_error(Errc::io_error,
                      "cannot make a socket pair for " + std::string(purpose) + ": " + std::strerror(errno));
  return SocketPairEnds{UniqueFd(ends[0]), UniqueFd(ends[1])};
}

}  // namespace drk
