#include "runtime/inspection/inspection_reporter.h"

#include <memory>
#include <optional>

#include "runtime/transport/envelope_frame.h"
#include "runtime/transport/outbox.h"
#include "runtime/supervision/process_signals.h"

namespace drk::runtime {

InspectionReporter::InspectionReporter(const ActorHost& host, HostView identity, Sink sink,
                                       std::chrono::milliseconds period)
    : host_(host), identity_(std::move(identity)), sink_(std::move(sink)), period_(period) {
  thread_ = std::thread([this] { run(); });
}

InspectionReporter::~InspectionReporter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void InspectionReporter::run() {
  block_process_signals_in_this_thread();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    sink_(sample());
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

HostView InspectionReporter::sample() {
  const auto now = ThroughputWindow::Clock::now();
  HostView report = identity_;
  for (const LocalActorStats& local : host_.stats()) {
    const double rate = throughput_[local.name].add(now, local.stats.messages_handled);
    ActorView actor = view_of(local, rate);
    actor.process = identity_.process;
    actor.pid = identity_.pid;
    report.actors.push_back(std::move(actor));
  }
  return report;
}

InspectionReporter::Sink send_to_head(Transport& transport) {
  // Created here, used only on the reporter's thread (its sockets are opened on first send),
  // and destroyed with the sink after that thread has been joined.
  auto outbox = std::make_shared<Outbox>(transport, "inspection@" + transport.local_process());
  return [outbox](const HostView& report) {
    SendOptions options;
    options.wait_for_room = std::chrono::milliseconds{0};
    (void)outbox->send(
        kHeadActor, [&](msg::Envelope::Builder envelope) { write_host_stats(report, envelope.getBody().initHostStats()); },
        options);
  };
}

std::string node_supervisor_endpoint(const std::string& socket_dir, std::string_view node) {
  return "ipc://" + socket_dir + "/supervisor@" + std::string(node);
}

InspectionReporter::Sink send_to_node_supervisor(zmq::context_t& context, std::string endpoint) {
  struct Link {
    zmq::context_t& context;
    std::string endpoint;
    std::optional<zmq::socket_t> socket;  // opened and used on the reporter's thread only
  };
  auto link = std::make_shared<Link>(Link{context, std::move(endpoint), std::nullopt});
  return [link](const HostView& report) {
    if (!link->socket) {
      link->socket.emplace(link->context, zmq::socket_type::push);
      link->socket->set(zmq::sockopt::linger, 0);
      link->socket->set(zmq::sockopt::sndhwm, 4);
      link->socket->connect(link->endpoint);
    }
    zmq::message_t frame = envelope_frame(
        [&](msg::Envelope::Builder envelope) { write_host_stats(report, envelope.getBody().initHostStats()); });
    (void)link->socket->send(frame, zmq::send_flags::dontwait);
  };
}

InspectionReporter::Sink both(InspectionReporter::Sink first, InspectionReporter::Sink second) {
  return [first = std::move(first), second = std::move(second)](const HostView& report) {
    first(report);
    second(report);
  };
}

}  // namespace drk::runtime
