// InspectionReporter: a thread of every actor process that, once per `period`, takes the
// statistics of the host's actors, adds each one's throughput (messages handled per second over
// the last few seconds) and hands the resulting HostView to a sink: in a child process
// send_to_head() (a HostStats message to the head actor, through the transport), in the head
// the InspectionBoard directly. The first report goes out at once, so that a process shows as
// running within moments of its start. In a child the period is supervision.heartbeat_ms: its
// reports are the process's heartbeats, which the head checks (heartbeat_monitor.h). A process
// on another node also reports to its node's supervisor (send_to_node_supervisor()), which
// checks the heartbeats of the processes it started the same way.
//
// Cost: one snapshot per actor and one small message per process per period.
// Thread-safety: construct and destroy from one thread; the sink runs on the reporter's thread.
// The host must outlive the reporter; the reporter must be destroyed before the Transport a
// send_to_head() sink uses.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <zmq.hpp>

#include "runtime/actor_host.h"
#include "runtime/inspection/inspection_view.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {

class InspectionReporter {
 public:
  using Sink = std::function<void(const HostView&)>;

  // `identity` names the process (process, incarnation, pid); its actors are filled in.
  InspectionReporter(const ActorHost& host, HostView identity, Sink sink,
                     std::chrono::milliseconds period = std::chrono::seconds(1));
  ~InspectionReporter();
  InspectionReporter(const InspectionReporter&) = delete;
  InspectionReporter& operator=(const InspectionReporter&) = delete;

 private:
  void run();
  HostView sample();

  const ActorHost& host_;
  HostView identity_;
  Sink sink_;
  std::chrono::milliseconds period_;
  std::map<std::string, ThroughputWindow, std::less<>> throughput_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// A sink that sends each HostView to the head actor as a HostStats message; a report that finds
// the head's mailbox full is dropped (the next one follows within a period).
InspectionReporter::Sink send_to_head(Transport& transport);

// Where the supervisor of `node` (drk node) takes its processes' reports: an ipc socket in the
// node's socket directory.
std::string node_supervisor_endpoint(const std::string& socket_dir, std::string_view node);

// A sink that sends each HostView as a HostStats envelope to `endpoint` (a PUSH socket of its
// own, opened on the reporter's thread at the first report); a full queue drops the report.
InspectionReporter::Sink send_to_node_supervisor(zmq::context_t& context, std::string endpoint);

// A sink that hands each report to `first`, then to `second`.
InspectionReporter::Sink both(InspectionReporter::Sink first, InspectionReporter::Sink second);

}  // namespace drk::runtime
