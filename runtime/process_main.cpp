#include "runtime/process_main.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "runtime/actor_host.h"
#include "runtime/gpu_pinning.h"
#include "runtime/transport/outbox.h"
#include "runtime/supervision/death_cause.h"
#include "runtime/head_actor.h"
#include "runtime/nodes/head_network.h"
#include "runtime/supervision/heartbeat_monitor.h"
#include "runtime/inspection/inspection_board.h"
#include "runtime/inspection/inspection_reporter.h"
#include "runtime/inspection/inspection_server.h"
#include "runtime/log.h"
#include "runtime/supervision/peer_news.h"
#include "runtime/role_registry.h"
#include "runtime/nodes/run_network.h"
#include "runtime/supervision/supervisor.h"
#include "runtime/topology/gpu_sharing.h"
#include "runtime/topology/topology.h"
#include "runtime/trace/trace_recorder.h"
#include "runtime/transport/transport.h"
#include "base/program_path.h"
#include "base/unique_fd.h"
#include "runtime/supervision/warm_spare.h"

namespace drk::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kPublishProcessesEvery{250};  // the supervisor's view, to inspection

// RUN_DIR/run.lock, held (flock) for the life of the head through the descriptor returned: two
// runs must not share sockets and files.
Result<UniqueFd> lock_run_dir(const std::string& run_dir) {
  const std::string path = run_dir + "/run.lock";
  UniqueFd lock(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (!lock) {
    return make_error(Errc::io_error,
                      "cannot create '" + path + "': check that the run directory is writable");
  }
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return make_error(Errc::busy,
                      "another `drk run` is using '" + run_dir +
                          "': wait for it to end or choose another run_dir (--set run_dir=...)");
  }
  return lock;
}

// The socket directory goes with the run.
class SocketDirCleanup {
 public:
  explicit SocketDirCleanup(std::string dir) : dir_(std::move(dir)) {}
  ~SocketDirCleanup() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

 private:
  std::string dir_;
};

Status check_roles(const Topology& topology) {
  std::string problems;
  for (const auto& actor : topology.actors) {
    if (is_role_registered(actor.role)) continue;
    std::string known;
    for (const auto& role : registered_roles()) known += (known.empty() ? "" : ", ") + role;
    problems += (problems.empty() ? "" : "\n") + actor.where + ": role '" + actor.role +
                "' is unknown; known roles: " + (known.empty() ? "none" : known);
  }
  std::set<std::string> reported;  // once per role and peer, at its first entry
  for (const auto& actor : topology.actors) {
    for (const auto& [peer, why] : required_peers(actor.role)) {
      if (!topology.members(peer).empty() || !reported.insert(actor.role + "/" + peer).second) continue;
      problems += (problems.empty() ? "" : "\n") + actor.where + ": a " + actor.role + " needs a " + peer +
                  " in the topology (" + why + "): add one, e.g. `- {role: " + peer + ", process: own}`";
    }
  }
  if (problems.empty()) return {};
  return make_error(Errc::invalid_argument, problems);
}

Status prepare_run_dir(const Topology& topology, const std::string& run_dir) {
  std::error_code error;
  fs::create_directories(run_dir, error);
  if (error) {
    return make_error(Errc::io_error,
                      "cannot create the run directory '" + run_dir + "': " + error.message());
  }
  // Causes left by an earlier run in this directory would be misattributed.
  fs::remove_all(run_dir + "/causes", error);
  fs::create_directories(run_dir + "/causes", error);
  return write_resolved_topology(topology, run_dir, run_dir + "/topology.yaml");
}

// Everything but the lock that this run holds.
Status clear_run_dir(const std::string& run_dir) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(run_dir, error)) {
    if (entry.path().filename() == "run.lock") continue;
    fs::remove_all(entry.path(), error);
    if (error) {
      return make_error(Errc::io_error, "cannot clear '" + entry.path().string() +
                                            "' for --fresh: " + error.message());
    }
  }
  return {};
}

// The process's trace recorder (runtime/trace/), unless the topology turns traces off; a
// recorder that cannot open is reported and the process runs without one.
std::shared_ptr<trace::TraceRecorder> open_trace(const Topology& topology, const std::string& run_dir,
                                                 const std::string& process, uint64_t incarnation) {
  if (!topology.supervision.trace) return nullptr;
  auto recorder = trace::TraceRecorder::open({run_dir, process, incarnation});
  if (!recorder) {
    log::warn() << "drk: process " << process << " records no trace: " << recorder.error().message;
    return nullptr;
  }
  return std::move(*recorder);
}

// `drk run --dry-run`: the resolved document, then one line per process to start.
void print_dry_run(const Topology& topology, std::ostream& out) {
  YAML::Emitter emitter;
  emitter << topology.resolved;
  out << "# " << topology.name << ", resolved (RUN_DIR/topology.yaml would hold this)\n" << emitter.c_str() << "\n";
  out << "# processes (" << topology.child_processes().size() << " beside the head):\n";
  for (const std::string& process : topology.child_processes()) {
    const ActorEntry& first = *topology.actors_of(process).front();
    out << "#   " << process << ": node " << first.node;
    if (first.gpu >= 0) out << ", GPU " << first.gpu << " (CUDA_VISIBLE_DEVICES=" << first.gpu << ")";
    out << "\n";
  }
  out << std::flush;
}

int fail(const std::string& command, const Error& error) {
  log::error() << command << ": " << error.message;
  return 1;
}

}  // namespace

int run_head(const RunOptions& options) {
  auto loaded = load_topology(options.topology_path, options.overrides, options.visible_gpus);
  if (!loaded) return fail("drk run", loaded.error());
  const Topology& topology = *loaded;
  if (auto roles = check_roles(topology); !roles) return fail("drk run", roles.error());
  if (auto gpus = check_one_evaluator_per_gpu(topology); !gpus) return fail("drk run", gpus.error());
  if (options.dry_run) {
    print_dry_run(topology, std::cout);
    return 0;
  }

  const std::string run_dir = fs::absolute(topology.run_dir).lexically_normal().string();
  if (std::error_code error; !fs::create_directories(run_dir, error) && error) {
    return fail("drk run", make_error(Errc::io_error, "cannot create the run directory '" + run_dir +
                                                          "': " + error.message()));
  }
  auto lock = lock_run_dir(run_dir);
  if (!lock) return fail("drk run", lock.error());
  if (options.fresh) {
    if (auto cleared = clear_run_dir(run_dir); !cleared) return fail("drk run", cleared.error());
  } else if (fs::exists(run_dir + "/topology.yaml")) {
    std::cout << "drk run: resuming the run in " << run_dir << " (--fresh starts over)" << std::endl;
  }
  if (auto prepared = prepare_run_dir(topology, run_dir); !prepared) return fail("drk run", prepared.error());
  // From here on (--fresh has cleared RUN_DIR), lines go to RUN_DIR/logs/head.log too.
  log::configure({std::string(kHeadProcess), run_dir});
  const std::string executable = options.executable.empty() ? this_program_path() : options.executable;

  boost::asio::io_context io;
  // Installed before any child exists, so that no death goes unseen.
  boost::asio::signal_set signals(io, SIGCHLD, SIGINT, SIGTERM);

  const uint64_t incarnation = static_cast<uint64_t>(system_unix_ms()) << 16;
  SocketDirCleanup socket_dir_cleanup(socket_dir_for(run_dir));
  InspectionBoard board(topology, run_dir, system_unix_ms);

  // Multi-node: listen for nodes and wait until every one has joined (docs/multi-node.md);
  // Ctrl-C while waiting stops the run.
  int signal_exit_code = 0;
  signals.async_wait([&](const boost::system::error_code& error, int signal_number) {
    if (!error && signal_number != SIGCHLD) signal_exit_code = 128 + signal_number;
  });
  auto head_network = HeadNetwork::start(topology, run_dir, incarnation, io, board, [&] {
    io.poll();
    io.restart();
    return signal_exit_code != 0;
  });
  if (!head_network) {
    if (signal_exit_code != 0) return signal_exit_code;
    return fail("drk run", head_network.error());
  }
  signals.cancel();
  io.poll();
  io.restart();
  Transport transport(topology, std::string(kHeadProcess), run_dir, (*head_network)->transport_network());
  Outbox control(transport, "supervisor");
  ForkExecLauncher launcher;
  launcher.keep_warm_spare(spare_argv(executable, topology.supervision.warm_spare));

  SupervisorOptions supervisor_options;
  supervisor_options.executable = executable;
  supervisor_options.run_dir = run_dir;
  supervisor_options.on_restarted = [&](const std::vector<std::string>& restarted) {
    tell_every_actor(control, topology, restarted, PeerNews::restarted);
  };
  Supervisor supervisor(io, topology, launcher, supervisor_options);

  HostOptions host_options;
  host_options.run_dir = run_dir;
  host_options.incarnation = incarnation;
  host_options.trace = open_trace(topology, run_dir, std::string(kHeadProcess), incarnation);
  ActorHost host(transport, host_options);
  if (auto added = host.add_topology_actors(); !added) return fail("drk run", added.error());
  ActorSpec head_spec;
  head_spec.name = std::string(kHeadActor);
  head_spec.role = std::string(kHeadActor);
  head_spec.experiment = YAML::Clone(topology.experiment);
  head_spec.run_dir = run_dir;
  head_spec.incarnation = incarnation;
  host.add(std::move(head_spec),
           std::make_unique<HeadActor>(
               std::cout, make_progress_observer(topology),
               [&] {
                 boost::asio::post(io, [&] {
                   (*head_network)->shutdown_nodes();
                   supervisor.stop();
                 });
               },
               [&](msg::HostStats::Reader stats) { board.update_host(read_host_stats(stats)); },
               [&](const std::string& line) { board.update_training(line); }));
  if (auto started = host.start(); !started) return fail("drk run", started.error());

  InspectionReporter head_reporter(host, HostView{std::string(kHeadProcess), incarnation, ::getpid(), {}},
                                   [&](const HostView& report) { board.update_host(report); });
  auto inspection =
      InspectionServer::start(transport.context(), local_inspect_endpoint(transport.socket_dir()), run_dir, board);
  if (!inspection) log::warn() << "drk run: inspection is off: " << inspection.error().message;
  std::unique_ptr<HeadService> head_service;
  if (options.head_service) {
    auto started = options.head_service(board, run_dir);
    if (!started) return fail("drk run", started.error());
    head_service = std::move(*started);
  }
  boost::asio::steady_timer publish_timer(io);
  std::function<void()> publish_processes = [&] {
    ProcessView head;
    head.name = std::string(kHeadProcess);
    head.pid = ::getpid();
    head.incarnation = incarnation;
    std::vector<ProcessView> processes{head};
    for (const ProcessRecord& record : supervisor.processes()) processes.push_back(process_view(record));
    for (ProcessView& process : (*head_network)->node_processes()) processes.push_back(std::move(process));
    board.update_processes(std::move(processes));
    board.update_network((*head_network)->nodes(), (*head_network)->refused_peers() + transport.refused_peers());
    publish_timer.expires_after(kPublishProcessesEvery);
    publish_timer.async_wait([&](const boost::system::error_code& error) {
      if (!error) publish_processes();
    });
  };

  (*head_network)->set_handlers(HeadNetworkHandlers{
      [&](const std::string& node, const std::string& cause) {
        log::warn() << "drk run: node " << node << " lost: " << cause << "; its work moves to the other nodes";
        tell_every_actor(control, topology, topology.mailboxes_on(node), PeerNews::lost, node);
      },
      [&](const std::string& node) {
        log::info() << "drk run: node " << node << " is back";
        tell_every_actor(control, topology, topology.mailboxes_on(node), PeerNews::restarted);
      }});
  std::optional<Status> outcome;
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& error, int signal_number) {
        if (error) return;
        if (signal_number == SIGCHLD) {
          supervisor.children_exited();
          publish_processes();
        } else if (signal_exit_code == 0) {
          signal_exit_code = 128 + signal_number;
          log::info() << "drk run: stopping (" << (signal_number == SIGINT ? "SIGINT" : "SIGTERM") << ")";
          (*head_network)->shutdown_nodes();
          supervisor.stop();
        }
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);
  supervisor.start([&](Status result) {
    outcome = std::move(result);
    io.stop();
  });
  HealthChecks health_checks(io, supervisor, board, topology);
  health_checks.start();
  publish_processes();
  io.run();
  if (inspection) inspection->reset();  // `drk top` sees the run end now, not after the summary
  host.drain(std::chrono::milliseconds{topology.supervision.drain_ms});
  head_service.reset();

  if (outcome && !outcome->ok()) return fail("drk run", outcome->error());
  if (signal_exit_code != 0) return signal_exit_code;
  return options.summary ? options.summary(run_dir) : 0;
}

int run_host(const HostArgs& args) {
  const std::string command = "drk host " + args.process;
  const std::string run_dir = fs::absolute(args.run_dir).lexically_normal().string();
  log::configure({args.process, run_dir});
  auto loaded = load_topology(run_dir + "/topology.yaml");
  if (!loaded) return fail(command, loaded.error());
  const Topology& topology = *loaded;
  if (topology.actors_of(args.process).empty()) {
    return fail(command, make_error(Errc::not_found, "the topology in '" + run_dir +
                                                         "' has no process named '" + args.process + "'"));
  }

  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });

  // Pinned before anything touches CUDA: the process sees its GPU as device 0 (gpu_pinning.h:
  // within the GPUs an outer CUDA_VISIBLE_DEVICES, Slurm's, allows).
  if (const int gpu = topology.actors_of(args.process).front()->gpu; gpu >= 0) {
    ::setenv("CUDA_VISIBLE_DEVICES", pinned_device(gpu, std::getenv("CUDA_VISIBLE_DEVICES")).c_str(), 1);
  }
  auto network = load_run_network(run_dir);
  if (!network) return fail(command, network.error());
  Transport transport(topology, args.process, run_dir, std::move(*network));
  HostOptions host_options;
  host_options.run_dir = run_dir;
  host_options.incarnation = args.incarnation;
  host_options.trace = open_trace(topology, run_dir, args.process, args.incarnation);
  ActorHost host(transport, host_options);
  Status started = host.add_topology_actors();
  if (started) started = host.start();
  if (!started) {
    write_death_cause(run_dir, args.process, "process " + args.process + ": " + started.error().message);
    return fail(command, started.error());
  }
  // Its reports are the process's heartbeats (heartbeat_monitor.h).
  // On another node, its supervisor checks them too (it can kill and restart the process).
  const std::string& node = transport.network().local_node;
  InspectionReporter reporter(
      host, HostView{args.process, args.incarnation, ::getpid(), {}},
      node == kHeadNode ? send_to_head(transport)
                        : both(send_to_head(transport),
                               send_to_node_supervisor(transport.context(),
                                                       node_supervisor_endpoint(transport.socket_dir(), node))),
      std::chrono::milliseconds{topology.supervision.heartbeat_ms});
  io.run();
  // SIGTERM is the supervisor's orderly stop: what the mailboxes already hold is handled first.
  host.drain(std::chrono::milliseconds{topology.supervision.drain_ms});
  return 0;
}

}  // namespace drk::runtime
