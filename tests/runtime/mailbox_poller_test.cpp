#include "runtime/transport/mailbox_poller.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/doctest_drk.h"

namespace drk::runtime {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A wait that should return at once gets this long; one that returns after it slept through.
constexpr auto kPatience = 10s;

// Two inproc mailboxes and a sender to each, as an actor's Outboxes reach its mailboxes.
struct Mailboxes {
  zmq::context_t context;
  zmq::socket_t first{context, zmq::socket_type::pull};
  zmq::socket_t second{context, zmq::socket_type::pull};
  zmq::socket_t to_first{context, zmq::socket_type::push};
  zmq::socket_t to_second{context, zmq::socket_type::push};
  zmq::socket_t* const sockets[2] = {&first, &second};

  Mailboxes() {
    first.bind("inproc://first");
    second.bind("inproc://second");
    to_first.connect("inproc://first");
    to_second.connect("inproc://second");
  }
};

// An eventfd, closed at the end of the test.
struct Wakeup {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ~Wakeup() { close(fd); }
};

// Reads `socket` as an actor does: until recv(dontwait) finds nothing. Returns the count read.
int drain(zmq::socket_t& socket) {
  int read = 0;
  zmq::message_t message;
  while (socket.recv(message, zmq::recv_flags::dontwait)) ++read;
  return read;
}

// Whether wait(kPatience) returned without sleeping through its timeout.
bool returns_at_once(MailboxPoller& poller) {
  const auto started = Clock::now();
  poller.wait(std::chrono::duration_cast<std::chrono::milliseconds>(kPatience));
  return Clock::now() - started < kPatience;
}

DRK_TEST_CASE("a MailboxPoller reports a mailbox that was never drained ready without sleeping") {
  Mailboxes mailboxes;
  Wakeup wakeup;
  MailboxPoller poller(wakeup.fd, mailboxes.sockets);
  DRK_CHECK(returns_at_once(poller));
  DRK_CHECK(poller.mailbox_ready(0));
  DRK_CHECK(poller.mailbox_ready(1));
  DRK_CHECK_FALSE(poller.plain_ready());
}

DRK_TEST_CASE("a MailboxPoller sleeps while its mailboxes are drained and wakes for the one that gets a message") {
  Mailboxes mailboxes;
  Wakeup wakeup;
  MailboxPoller poller(wakeup.fd, mailboxes.sockets);
  for (std::size_t index = 0; index < 2; ++index) {
    DRK_CHECK(drain(*mailboxes.sockets[index]) == 0);
    poller.set_drained(index, true);
  }
  poller.wait(20ms);
  DRK_CHECK_FALSE(poller.mailbox_ready(0));
  DRK_CHECK_FALSE(poller.mailbox_ready(1));
  DRK_CHECK_FALSE(poller.plain_ready());

  DRK_REQUIRE(mailboxes.to_second.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait));
  DRK_CHECK(returns_at_once(poller));
  DRK_CHECK_FALSE(poller.mailbox_ready(0));
  DRK_CHECK(poller.mailbox_ready(1));
  DRK_CHECK(drain(mailboxes.second) == 1);

  const uint64_t one = 1;
  DRK_REQUIRE(write(wakeup.fd, &one, sizeof one) == sizeof one);
  DRK_CHECK(returns_at_once(poller));
  DRK_CHECK(poller.plain_ready());
}

DRK_TEST_CASE("a mailbox read only in part is ready again although ZeroMQ does not signal it again") {
  Mailboxes mailboxes;
  Wakeup wakeup;
  MailboxPoller poller(wakeup.fd, mailboxes.sockets);
  DRK_CHECK(drain(mailboxes.first) == 0);
  DRK_CHECK(drain(mailboxes.second) == 0);
  poller.set_drained(0, true);
  poller.set_drained(1, true);
  for (const char* text : {"one", "two"}) {
    DRK_REQUIRE(mailboxes.to_first.send(zmq::buffer(std::string(text)), zmq::send_flags::dontwait));
  }
  DRK_CHECK(returns_at_once(poller));
  DRK_REQUIRE(poller.mailbox_ready(0));
  zmq::message_t message;
  DRK_REQUIRE(mailboxes.first.recv(message, zmq::recv_flags::dontwait));
  DRK_CHECK(message.to_string() == "one");
  poller.set_drained(0, false);  // an actor's share of a wakeup ran out before the mailbox did

  DRK_CHECK(returns_at_once(poller));
  DRK_CHECK(poller.mailbox_ready(0));
  DRK_CHECK(drain(mailboxes.first) == 1);
}

}  // namespace
}  // namespace drk::runtime
