// MailboxPoller: an actor thread's wait for its mailboxes (ZeroMQ sockets it receives on) and one
// plain file descriptor (its stop signal), in one poll(2) and no other system call.
//
// Why not zmq_poll: before it sleeps and again after it wakes, zmq_poll asks every socket for
// its events, and each ask is a system call of its own (the socket checks its command pipe).
// With two mailboxes that made an actor's wakeup cost about three times the system calls of a
// raw ZeroMQ receive, the difference between the two in the runtime benchmark's round trips.
//
// How: a socket's ZMQ_FD becomes readable when a command reaches the socket, such as the one
// that tells it a quiet pipe has a message again. A recv(dontwait) that finds nothing has just
// processed every command, so from then on the descriptor signals the next message; until then
// it may stay quiet while messages wait. The caller therefore says, after reading a mailbox,
// whether it read it until recv(dontwait) found nothing (drained) or stopped early; wait() sleeps
// only when every mailbox is drained, and reports an undrained one ready at once. A mailbox
// starts undrained. A mailbox reported ready may hold nothing (a command that was not a message).
//
// Thread-safety: one thread, the one that receives on the sockets (ZeroMQ sockets are
// single-threaded). The sockets and the descriptor must outlive the poller.
// Errors: a poll(2) failure other than EINTR throws std::system_error (a fault); a signal ends
// wait() early with nothing ready.
#pragma once

#include <poll.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <span>
#include <zmq.hpp>

namespace drk::runtime {

class MailboxPoller {
 public:
  static constexpr std::size_t kMaxMailboxes = 3;

  // `plain_fd`: a file descriptor readable when the thread is wanted (e.g. an eventfd).
  // `mailboxes`: at most kMaxMailboxes sockets.
  MailboxPoller(int plain_fd, std::span<zmq::socket_t* const> mailboxes);

  // Waits until the plain descriptor or a mailbox is ready, or `timeout` passes (negative: no
  // limit). Returns at once when a mailbox is undrained.
  void wait(std::chrono::milliseconds timeout);

  bool plain_ready() const { return plain_ready_; }
  bool mailbox_ready(std::size_t index) const { return mailbox_ready_[index]; }

  // What the caller's last read of mailbox `index` found: true when recv(dontwait) found nothing.
  void set_drained(std::size_t index, bool drained) { drained_[index] = drained; }

 private:
  std::array<pollfd, kMaxMailboxes + 1> descriptors_{};
  std::size_t mailbox_count_;
  std::array<bool, kMaxMailboxes> drained_{};
  std::array<bool, kMaxMailboxes> mailbox_ready_{};
  bool plain_ready_ = false;
};

}  // namespace drk::runtime
