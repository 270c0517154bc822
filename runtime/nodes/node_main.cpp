#include "runtime/nodes/node_main.h"

#include <unistd.h>
#include <zmq_addon.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstring>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/program_path.h"
#include "runtime/transport/envelope_frame.h"
#include "runtime/supervision/heartbeat_monitor.h"
#include "runtime/inspection/inspection_board.h"
#include "runtime/inspection/inspection_reporter.h"
#include "runtime/log.h"
#include "runtime/nodes/network_map.h"
#include "runtime/supervision/peer_news.h"
#include "runtime/supervision/process_launcher.h"
#include "runtime/supervision/warm_spare.h"
#include "runtime/nodes/run_network.h"
#include "runtime/supervision/supervisor.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kJoinEvery{250};  // before the first welcome
constexpr std::size_t kMaxHeadMessageBytes = 16u << 20;
constexpr std::size_t kMaxReportBytes = 1u << 20;  // a HostStats of every actor of a process

// The actors of one welcome: its topology, and the supervisor of this node's processes.
struct NodeRun {
  uint64_t run_id = 0;
  Topology topology;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<Outbox> control;
  // The reports of this node's processes (their heartbeats), for the health checks.
  std::unique_ptr<InspectionBoard> board;
  std::optional<zmq::socket_t> reports;
  std::unique_ptr<Supervisor> supervisor;
  std::unique_ptr<HealthChecks> health;  // declared last: stops before what it reads
};

class NodeAgent {
 public:
  NodeAgent(const NodeArgs& args, std::string run_dir, boost::asio::io_context& io)
      : run_dir_(std::move(run_dir)), args_(args), io_(io), timer_(io) {}

  Status connect() {
    if (!args_.keys.empty()) {
      auto identity = load_curve_identity(args_.keys, args_.name);
      if (!identity) return identity.error();
      auto head_key = read_public_key(args_.keys, std::string(kHeadNode));
      if (!head_key) return head_key.error();
      curve_ = std::move(*identity);
      head_key_ = std::move(*head_key);
    }
    head_ = zmq::socket_t(context_, zmq::socket_type::dealer);
    head_.set(zmq::sockopt::linger, 0);
    head_.set(zmq::sockopt::reconnect_ivl, 100);
    head_.set(zmq::sockopt::reconnect_ivl_max, 1000);
    if (curve_) make_curve_client(head_, curve_->own, head_key_);
    // libzmq does not retry after the head refuses the handshake: watch for it and say why.
    const std::string monitor_endpoint = "inproc://drk-node-monitor";
    zmq_socket_monitor(head_.handle(), monitor_endpoint.c_str(),
                       ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
    handshake_events_ = zmq::socket_t(context_, zmq::socket_type::pair);
    handshake_events_.connect(monitor_endpoint);
    try {
      head_.connect(args_.join);
    } catch (const zmq::error_t& error) {
      return make_error(Errc::invalid_argument, "cannot connect to '" + args_.join + "': " + error.what());
    }
    incarnation_ = (static_cast<uint64_t>(system_unix_ms()) << 16) ^ static_cast<uint64_t>(::getpid());
    log::info() << "drk node " << args_.name << ": joining " << args_.join;
    tick();
    return {};
  }

  // SIGINT / SIGTERM / Control.shutdown: stop the processes, then the io loop.
  void stop(int exit_code) {
    if (stopping_) return;
    stopping_ = true;
    exit_code_ = exit_code;
    if (run_ && run_->supervisor) {
      run_->supervisor->stop();
    } else {
      io_.stop();
    }
  }

  void children_exited() {
    if (run_ && run_->supervisor) run_->supervisor->children_exited();
  }

  int exit_code() const { return exit_code_; }

 private:
  void tick() {
    check_handshakes();
    if (!stopping_) receive();
    // This node's processes as its supervisor has them: for its health checks and the head.
    std::vector<ProcessView> processes;
    if (run_) {
      for (const ProcessRecord& record : run_->supervisor->processes()) processes.push_back(process_view(record));
    }
    take_reports(processes);
    if (stopping_) return;
    const int64_t now = steady_ms();
    if (!run_) {
      send_join();
    } else {
      const NetworkSettings& network = run_->topology.network;
      if (now - head_heard_ms_ > network.node_timeout_ms) {
        if (!head_lost_) {
          log::warn() << "drk node " << args_.name << ": no word from the head for " << (now - head_heard_ms_)
                      << " ms; its actors keep running, joining again";
          head_lost_ = true;
        }
        send_join();
      }
      send_heartbeat(processes);
    }
    const auto every = run_ ? std::chrono::milliseconds(run_->topology.network.heartbeat_ms) : kJoinEvery;
    timer_.expires_after(every);
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (!error) tick();
    });
  }

  void receive() {
    while (true) {
      zmq::message_t frame;
      if (!head_.recv(frame, zmq::recv_flags::dontwait)) return;
      auto decoded = decode_envelope_frame(std::move(frame), kMaxHeadMessageBytes);
      if (!decoded) continue;
      const auto body = decoded->root<msg::Envelope>().getBody();
      if (body.isNodeWelcome()) {
        on_welcome(body.getNodeWelcome());
      } else if (body.isNodeHeartbeat()) {
        heard_from_head();
      } else if (body.isControl() && body.getControl().isShutdown()) {
        log::info() << "drk node " << args_.name << ": the run is over";
        stop(0);
        return;
      }
    }
  }

  void check_handshakes() {
    std::vector<zmq::message_t> event;
    while (zmq::recv_multipart(handshake_events_, std::back_inserter(event), zmq::recv_flags::dontwait)) {
      uint16_t id = 0;
      if (!event.empty() && event[0].size() >= sizeof id) std::memcpy(&id, event[0].data(), sizeof id);
      event.clear();
      log::error() << "drk node " << args_.name << ": the head at " << args_.join << " refused this node: "
                   << (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                           ? "its key is not allowed there; copy " + args_.keys + "/" + args_.name +
                                 ".pub into the head's key directory (docs/security.md)"
                           : std::string(args_.keys.empty() ? "the head requires CURVE keys; pass --keys DIR"
                                                            : "the head does not use CURVE; drop --keys"));
      stop(1);
      return;
    }
  }

  void heard_from_head() {
    head_heard_ms_ = steady_ms();
    if (head_lost_) log::info() << "drk node " << args_.name << ": the head is back";
    head_lost_ = false;
  }

  void on_welcome(msg::NodeWelcome::Reader welcome) {
    if (welcome.getRefused().size() > 0) {
      log::error() << "drk node " << args_.name << ": the head refused this node: " << welcome.getRefused().cStr();
      stop(1);
      return;
    }
    heard_from_head();
    if (run_ && run_->run_id == welcome.getRunId()) return;  // a re-join acknowledged
    auto started = run_ ? restart_with(welcome) : start_run(welcome);
    if (!started) {
      log::error() << "drk node " << args_.name << ": " << started.error().message;
      stop(1);
    }
  }

  // The head started again: this node's processes follow its new topology.
  Status restart_with(msg::NodeWelcome::Reader welcome) {
    log::info() << "drk node " << args_.name << ": the head started again; restarting this node's actors";
    pending_topology_ = welcome.getTopologyYaml().cStr();
    pending_network_ = welcome.getNetworkYaml().cStr();
    pending_run_id_ = welcome.getRunId();
    restarting_ = true;
    run_->supervisor->stop();
    return {};
  }

  Status start_run(msg::NodeWelcome::Reader welcome) {
    return start_run(welcome.getRunId(), welcome.getTopologyYaml().cStr(), welcome.getNetworkYaml().cStr());
  }

  Status start_run(uint64_t run_id, const std::string& topology_yaml, const std::string& network_yaml) {
    YAML::Node document;
    try {
      document = YAML::Load(topology_yaml);
    } catch (const YAML::Exception& error) {
      return make_error(Errc::protocol_error, "the head sent a topology that does not parse: " + error.msg);
    }
    auto topology = parse_topology(document, "the head's topology");
    if (!topology) return topology.error();
    auto map = parse_network_map(network_yaml, "the head's network map");
    if (!map) return map.error();
    std::error_code error;
    fs::create_directories(run_dir_ + "/causes", error);
    if (error) return make_error(Errc::io_error, "cannot create '" + run_dir_ + "': " + error.message());
    if (auto written = write_resolved_topology(*topology, run_dir_, run_dir_ + "/topology.yaml"); !written) {
      return written.error();
    }
    const std::string keys = args_.keys.empty() ? "" : fs::absolute(args_.keys).lexically_normal().string();
    if (auto written = write_run_network(run_dir_, NodeIdentity{args_.name, keys}, *map); !written) {
      return written.error();
    }

    auto run = std::make_unique<NodeRun>();
    run->run_id = run_id;
    run->topology = std::move(*topology);
    TransportNetwork network;
    network.local_node = args_.name;
    network.map = std::move(*map);
    network.curve = curve_;
    run->transport = std::make_unique<Transport>(run->topology, "node@" + args_.name, run_dir_, std::move(network));
    run->control = std::make_unique<Outbox>(*run->transport, "supervisor@" + args_.name);
    SupervisorOptions options;
    options.executable = args_.executable.empty() ? this_program_path() : args_.executable;
    options.run_dir = run_dir_;
    options.node = args_.name;
    NodeRun* raw = run.get();
    options.on_restarted = [raw](const std::vector<std::string>& restarted) {
      tell_every_actor(*raw->control, raw->topology, restarted, PeerNews::restarted);
    };
    launcher_.keep_warm_spare(spare_argv(options.executable, run->topology.supervision.warm_spare));
    run->board = std::make_unique<InspectionBoard>(run->topology, run_dir_, system_unix_ms);
    run->reports.emplace(run->transport->context(), zmq::socket_type::pull);
    run->reports->set(zmq::sockopt::linger, 0);
    run->reports->bind(node_supervisor_endpoint(run->transport->socket_dir(), args_.name));
    run->supervisor = std::make_unique<Supervisor>(io_, run->topology, launcher_, options);
    run_ = std::move(run);
    const auto processes = run_->topology.child_processes_on(args_.name);
    log::info() << "drk node " << args_.name << ": welcomed; running " << processes.size() << " process(es) in "
                << run_dir_;
    run_->supervisor->start([this](Status outcome) {
      boost::asio::post(io_, [this, outcome] { on_run_over(outcome); });
    });
    // Missed heartbeats and hung handlers of this node's processes, as the head checks its own.
    run_->health = std::make_unique<HealthChecks>(io_, *run_->supervisor, *run_->board, run_->topology);
    run_->health->start();
    return {};
  }

  void on_run_over(const Status& outcome) {
    run_.reset();
    if (!outcome.ok()) {
      log::error() << "drk node " << args_.name << ": " << outcome.error().message;
      if (exit_code_ == 0) exit_code_ = 1;
      stopping_ = true;
    }
    if (restarting_ && !stopping_) {
      restarting_ = false;
      if (auto started = start_run(pending_run_id_, pending_topology_, pending_network_); !started) {
        log::error() << "drk node " << args_.name << ": " << started.error().message;
        exit_code_ = 1;
        io_.stop();
      }
      return;
    }
    io_.stop();
  }

  // The reports this node's processes sent since the last tick, and their current incarnations.
  void take_reports(const std::vector<ProcessView>& processes) {
    if (!run_ || !run_->reports) return;
    run_->board->update_processes(processes);
    while (true) {
      zmq::message_t frame;
      if (!run_->reports->recv(frame, zmq::recv_flags::dontwait)) return;
      auto decoded = decode_envelope_frame(std::move(frame), kMaxReportBytes);
      if (!decoded) continue;  // not from one of our hosts: ignored
      const auto body = decoded->root<msg::Envelope>().getBody();
      if (body.isHostStats()) run_->board->update_host(read_host_stats(body.getHostStats()));
    }
  }

  void send_join() {
    send(envelope_frame([&](msg::Envelope::Builder envelope) {
      envelope.setSender(args_.name);
      envelope.setRecipient(std::string(kHeadActor));
      auto join = envelope.getBody().initNodeJoin();
      join.setNode(args_.name);
      join.setHost(args_.advertise);
      join.setBindHost(args_.bind_host);
      join.setPortBase(args_.port);
      join.setPublicKey(curve_ ? curve_->own.public_key : "");
      join.setPid(::getpid());
      join.setIncarnation(incarnation_);
    }));
  }

  void send_heartbeat(const std::vector<ProcessView>& processes) {
    send(envelope_frame([&](msg::Envelope::Builder envelope) {
      envelope.setSender(args_.name);
      envelope.setRecipient(std::string(kHeadActor));
      auto heartbeat = envelope.getBody().initNodeHeartbeat();
      heartbeat.setNode(args_.name);
      heartbeat.setIncarnation(incarnation_);
      heartbeat.setSequence(++heartbeat_sequence_);
      write_processes(processes, heartbeat.initProcesses(static_cast<unsigned>(processes.size())));
    }));
  }

  // A full pipe (the head is away) drops the message: the next tick sends a fresh one.
  void send(zmq::message_t frame) { (void)head_.send(frame, zmq::send_flags::dontwait); }

  static int64_t steady_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
  }

 private:
  std::string run_dir_;
  const NodeArgs& args_;
  boost::asio::io_context& io_;
  boost::asio::steady_timer timer_;
  zmq::context_t context_;
  zmq::socket_t head_;
  zmq::socket_t handshake_events_;
  std::optional<CurveIdentity> curve_;
  std::string head_key_;
  uint64_t incarnation_ = 0;
  uint64_t heartbeat_sequence_ = 0;
  int64_t head_heard_ms_ = 0;
  bool head_lost_ = false;
  ForkExecLauncher launcher_;
  std::unique_ptr<NodeRun> run_;
  bool stopping_ = false;
  bool restarting_ = false;
  std::string pending_topology_;
  std::string pending_network_;
  uint64_t pending_run_id_ = 0;
  int exit_code_ = 0;
};

// `given` with the defaults of what it leaves empty: the advertised host and the run directory.
NodeArgs with_defaults(NodeArgs given) {
  if (given.advertise.empty()) {
    if (is_loopback_endpoint(given.join)) {
      given.advertise = parse_tcp_endpoint(given.join)->host;
    } else {
      char name[256] = {};
      given.advertise = ::gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
    }
  }
  if (given.run_dir.empty()) given.run_dir = "runs/node-" + given.name;
  return given;
}

}  // namespace

int run_node(const NodeArgs& given) {
  const NodeArgs args = with_defaults(given);
  const std::string command = "drk node " + args.name;
  const std::string run_dir = fs::absolute(args.run_dir).lexically_normal().string();
  log::configure({"node@" + args.name, run_dir});
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGCHLD, SIGINT, SIGTERM);
  NodeAgent agent(args, run_dir, io);
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& error,
                                                                             int signal_number) {
    if (error) return;
    if (signal_number == SIGCHLD) {
      agent.children_exited();
    } else {
      log::info() << command << ": stopping (" << (signal_number == SIGINT ? "SIGINT" : "SIGTERM") << ")";
      agent.stop(128 + signal_number);
    }
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);
  if (auto connected = agent.connect(); !connected) {
    log::error() << command << ": " << connected.error().message;
    return 1;
  }
  io.run();
  return agent.exit_code();
}

}  // namespace drk::runtime
