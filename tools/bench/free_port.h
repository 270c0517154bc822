// free_tcp_port(): a port of 127.0.0.1 that nothing listens on at the moment of the call, from
// the kernel's ephemeral range (another process may take it before the caller binds it).
// Errors: io_error when no socket can be opened or bound. Thread-safety: reentrant.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/result.h"

namespace drk::bench {

inline Result<uint16_t> free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return make_error(Errc::io_error, std::string("cannot open a socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool found = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  ::close(fd);
  if (!found) return make_error(Errc::io_error, std::string("cannot find a free tcp port: ") + std::strerror(error));
  return ntohs(address.sin_port);
}

}  // namespace drk::bench
