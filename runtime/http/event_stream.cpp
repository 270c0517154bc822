#include "runtime/http/event_stream.h"

#include <utility>

namespace drk::runtime::http {

std::string server_sent_event(const std::string& name, const std::string& data) {
  std::string text;
  if (!name.empty()) text += "event: " + name + "\n";
  size_t start = 0;
  while (true) {
    const size_t end = data.find('\n', start);
    text += "data: " + data.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return text + "\n";
}

void EventStream::publish(const std::string& name, const std::string& data) {
  std::unique_lock lock(mutex_);
  if (closed_) return;
  if (pending_events_ >= max_pending_) {
    closed_ = true;  // a client that reads nothing: it reconnects and asks for results again
  } else {
    pending_ += server_sent_event(name, data);
    ++pending_events_;
  }
  wake_locked(lock);
}

void EventStream::close() {
  std::unique_lock lock(mutex_);
  closed_ = true;
  wake_locked(lock);
}

std::string EventStream::take() {
  std::lock_guard lock(mutex_);
  pending_events_ = 0;
  return std::exchange(pending_, std::string());
}

bool EventStream::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

bool EventStream::wait(std::function<void()> wake) {
  std::unique_lock lock(mutex_);
  if (!pending_.empty() || closed_) {
    lock.unlock();
    wake();
    return true;
  }
  wake_ = std::move(wake);
  return false;
}

void EventStream::cancel_wait() {
  std::unique_lock lock(mutex_);
  auto wake = std::exchange(wake_, nullptr);
  lock.unlock();
}

void EventStream::wake_locked(std::unique_lock<std::mutex>& lock) {
  auto wake = std::exchange(wake_, nullptr);
  lock.unlock();
  if (wake) wake();
}

}  // namespace drk::runtime::http
