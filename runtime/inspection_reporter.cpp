#include "runtime/inspection_reporter.h"

#include <memory>

#include "runtime/outbox.h"
#include "runtime/process_signals.h"

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

}  // namespace drk::runtime
