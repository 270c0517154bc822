// EventStream: the server-sent events (text/event-stream) of one streaming answer, between the
// service that publishes them and the connection that writes them (runtime/http/http_server.h).
//
// Thread-safety: every member may be called from any thread. publish() never blocks: events queue
// until the connection takes them (a stream whose client reads nothing holds at most
// `max_pending` events; beyond that the stream closes, and the client reconnects). Ownership:
// shared by the publisher (who may keep a weak_ptr: an expired one means the client left) and the
// connection.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

namespace drk::runtime::http {

class EventStream {
 public:
  explicit EventStream(size_t max_pending = 1024) : max_pending_(max_pending) {}

  // Queues one event: `event: NAME` (omitted when empty) and `data:` lines of `data`.
  void publish(const std::string& name, const std::string& data);
  // No more events: the connection writes what is queued, then closes.
  void close();

  // The connection's side. take() returns every queued event's text (empty when none);
  // closed() says whether nothing more will come once those are written.
  std::string take();
  bool closed() const;
  // Calls `wake` once, from publish() or close() (or at once when something is already queued or
  // the stream is closed), so that the connection takes again. Returns whether it called at once.
  bool wait(std::function<void()> wake);
  // Drops the `wake` that wait() keeps (and what it holds): the server that stops.
  void cancel_wait();

 private:
  void wake_locked(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mutex_;
  std::string pending_;
  size_t pending_events_ = 0;
  size_t max_pending_;
  bool closed_ = false;
  std::function<void()> wake_;
};

// The text of one server-sent event.
std::string server_sent_event(const std::string& name, const std::string& data);

}  // namespace drk::runtime::http
