#include "runtime/transport/mailbox_poller.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <system_error>

namespace drk::runtime {

MailboxPoller::MailboxPoller(int plain_fd, std::span<zmq::socket_t* const> mailboxes)
    : mailbox_count_(mailboxes.size()) {
  if (mailboxes.size() > kMaxMailboxes) throw std::invalid_argument("MailboxPoller: more mailboxes than kMaxMailboxes");
  descriptors_[0] = pollfd{plain_fd, POLLIN, 0};
  for (std::size_t index = 0; index < mailboxes.size(); ++index) {
    descriptors_[index + 1] = pollfd{mailboxes[index]->get(zmq::sockopt::fd), POLLIN, 0};
  }
}

void MailboxPoller::wait(std::chrono::milliseconds timeout) {
  bool undrained = false;
  for (std::size_t index = 0; index < mailbox_count_; ++index) undrained |= !drained_[index];
  const int ready = ::poll(descriptors_.data(), mailbox_count_ + 1,
                           undrained ? 0 : static_cast<int>(std::clamp<int64_t>(timeout.count(), -1, INT_MAX)));
  if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
  const auto readable = [&](std::size_t slot) { return ready > 0 && (descriptors_[slot].revents & POLLIN) != 0; };
  plain_ready_ = readable(0);
  for (std::size_t index = 0; index < mailbox_count_; ++index) {
    mailbox_ready_[index] = !drained_[index] || readable(index + 1);
  }
}

}  // namespace drk::runtime
