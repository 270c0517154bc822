#include "actors/evaluator/descriptor_channel.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <capnp/serialize.h>

namespace drk::evaluator {

Status send_with_descriptors(int socket, capnp::MessageBuilder& message, std::span<const int> descriptors) {
  if (descriptors.size() > kMaxPassedDescriptors)
    return make_error(Errc::invalid_argument, "at most " + std::to_string(kMaxPassedDescriptors) +
                                                  " descriptors travel with one message");
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  if (bytes.size() > kMaxDescriptorMessageBytes)
    return make_error(Errc::invalid_argument, "a zygote message of " + std::to_string(bytes.size()) +
                                                  " bytes is over the limit of 64 KiB");
  iovec part{bytes.begin(), bytes.size()};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
  if (!descriptors.empty()) {
    header.msg_control = control;
    header.msg_controllen = CMSG_SPACE(sizeof(int) * descriptors.size());
    cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int) * descriptors.size());
    std::memcpy(CMSG_DATA(rights), descriptors.data(), sizeof(int) * descriptors.size());
  }
  for (;;) {
    if (sendmsg(socket, &header, MSG_NOSIGNAL) >= 0) return {};
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET)
      return make_error(Errc::peer_unavailable, "the other end of the zygote socket is closed");
    return make_error(Errc::io_error, std::string("sendmsg on the zygote socket failed: ") + std::strerror(errno));
  }
}

Result<ReceivedMessage> receive_with_descriptors(int socket, int timeout_ms) {
  for (;;) {
    pollfd descriptor{socket, POLLIN, 0};
    int ready = poll(&descriptor, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return make_error(Errc::io_error, std::string("poll failed: ") + std::strerror(errno));
    if (ready == 0) return make_error(Errc::timeout, "no message on the zygote socket before the deadline");
    break;
  }
  ReceivedMessage received;
  received.words = kj::heapArray<capnp::word>(kMaxDescriptorMessageBytes / sizeof(capnp::word));
  iovec part{received.words.begin(), kMaxDescriptorMessageBytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  ssize_t got = -1;
  do got = recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got < 0) {
    if (errno == ECONNRESET) return make_error(Errc::peer_unavailable, "the other end of the zygote socket is closed");
    return make_error(Errc::io_error, std::string("recvmsg on the zygote socket failed: ") + std::strerror(errno));
  }
  // Descriptors first, so that a refused message still closes them.
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      received.descriptors.emplace_back(fd);
    }
  }
  if (got == 0) return make_error(Errc::peer_unavailable, "the other end of the zygote socket is closed");
  if ((header.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || received.descriptors.size() > kMaxPassedDescriptors)
    return make_error(Errc::protocol_error, "a zygote message was truncated or carried too many descriptors");
  if (static_cast<size_t>(got) % sizeof(capnp::word) != 0)
    return make_error(Errc::protocol_error, "a zygote message of " + std::to_string(got) + " bytes is not whole words");
  received.words = kj::heapArray<capnp::word>(received.words.begin(), static_cast<size_t>(got) / sizeof(capnp::word));
  return received;
}

}  // namespace drk::evaluator
