// free_tcp_ports(span): the first of `span` consecutive ports of 127.0.0.1 that nothing listens
// on or holds at the moment of the call, for a run that binds them all (a node binds one port
// per mailbox, from its port base up).
//
// Why below 32000: Linux hands out local ports for outgoing connections from 32768 up
// (ip_local_port_range), so a port there that is free now can be the local end of the next
// connection a moment later, before the run binds it ("Address already in use"). Below that
// range only another listener can take it. Bases are drawn at random, so that concurrent runs
// (ctest -j) rarely probe the same ports.
// Errors: io_error when no socket can be opened, or no free block was found in 200 tries.
// Thread-safety: reentrant.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "base/result.h"

namespace drk::bench {

inline Result<uint16_t> free_tcp_ports(int span) {
  constexpr int kLowest = 20000, kHighest = 32000;  // below the kernel's ephemeral range
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> base_of(kLowest, kHighest - span);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = base_of(random);
    bool all_free = true;
    for (int port = base; port < base + span && all_free; ++port) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      if (fd < 0) return make_error(Errc::io_error, std::string("cannot open a socket: ") + std::strerror(errno));
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<uint16_t>(port));
      all_free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
      ::close(fd);
    }
    if (all_free) return static_cast<uint16_t>(base);
  }
  return make_error(Errc::io_error, "no " + std::to_string(span) + " consecutive free tcp ports of 127.0.0.1 between " +
                                        std::to_string(kLowest) + " and " + std::to_string(kHighest) +
                                        " in 200 tries: is the machine out of ports?");
}

}  // namespace drk::bench
