#include "tools/bench/simulated_nodes.h"

#include <capnp/message.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <tuple>
#include <zmq.hpp>

#include "base/json_text.h"
#include "messages/drk.capnp.h"
#include "runtime/inspection/inspection_view.h"
#include "runtime/payload.h"
#include "runtime/transport/codec.h"
#include "runtime/transport/envelope_frame.h"
#include "runtime/transport/transport.h"

namespace drk::bench {
namespace {

constexpr std::size_t kMaxWelcomeBytes = 64u << 20;  // the topology and the map of 1000 nodes
constexpr int64_t kJoinAgainMs = 1000;
constexpr int64_t kLongestPollMs = 20;
// Due evaluations complete in rounds at most this often: waking for each one (over a thousand a
// second at 500 nodes) costs a poll of every socket of the process each time, which made these
// processes, not the head, what bounded the load phase on 2 cores.
constexpr double kCompletionRoundMs = 5;

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct PhaseCounts {
  uint64_t heartbeats_sent = 0;
  uint64_t heartbeats_received = 0;
  uint64_t requests = 0;
  uint64_t redispatched = 0;
  uint64_t answered = 0;
  std::map<int64_t, uint64_t> latency_ms;  // whole ms -> requests
  double busy_ms = 0;
  double alive_ms = 0;
};

struct Job {
  std::unique_ptr<capnp::MallocMessageBuilder> candidate;
  double duration_ms = 0;
  uint64_t serial = 0;  // its entry in Simulation::due_
};

struct SimulatedEvaluator {
  std::string name;
  zmq::socket_t mailbox;
  std::deque<Job> jobs;  // the first is running; more only if the Oracle sends past the slot
};

struct SimulatedNode {
  std::string name;
  zmq::socket_t head;
  zmq::socket_t oracle;
  std::vector<SimulatedEvaluator> evaluators;
  std::deque<zmq::message_t> unsent;  // to the Oracle, waiting for room
  bool welcomed = false;
  bool alive = true;
  double next_join_ms = 0;
  double next_beat_ms = 0;
  uint64_t sequence = 0;
  uint64_t incarnation = 0;
  double killed_ms = -1;
};

// Where a socket of the poll list belongs.
struct PollTarget {
  std::size_t node;
  int evaluator;  // -1: the node's link to the head
};

class Simulation {
 public:
  explicit Simulation(const SimulatedNodesPlan& plan)
      : plan_(plan), times_(plan.fit, plan.time_scale, plan.seed), phase_(&phases_["start"]) {
    context_.set(zmq::ctxopt::max_sockets, 1 << 16);
  }

  int run() {
    if (auto started = start(); !started) {
      std::fprintf(stderr, "simulated nodes: %s\n", started.error().message.c_str());
      return 1;
    }
    last_account_ms_ = steady_ms();
    while (!ended_) {
      const double now = steady_ms();
      account(now);
      beat_and_join(now);
      complete_due(now);
      for (auto& node : nodes_) flush(node);
      double wake = now + kLongestPollMs;
      if (!due_.empty()) wake = std::min(wake, std::max(std::get<0>(due_.top()), now + kCompletionRoundMs));
      wait_and_receive(std::max(0.0, wake - now));
    }
    write_report();
    return 0;
  }

 private:
  Status start() {
    const int64_t network_incarnation = static_cast<int64_t>(::getpid()) << 20;
    auto oracle = plan_.map.mailbox_endpoint(*plan_.topology, "oracle", false);
    if (!oracle) return oracle.error();
    for (const std::string& name : plan_.nodes) {
      SimulatedNode node;
      node.name = name;
      node.incarnation = static_cast<uint64_t>(network_incarnation) + nodes_.size() + 1;
      node.head = zmq::socket_t(context_, zmq::socket_type::dealer);
      node.head.set(zmq::sockopt::linger, 0);
      node.head.connect(plan_.topology->network.listen);
      node.oracle = zmq::socket_t(context_, zmq::socket_type::push);
      node.oracle.set(zmq::sockopt::linger, 0);
      node.oracle.connect(*oracle);
      for (const std::string& actor : plan_.topology->mailboxes_on(name)) {
        auto endpoint = plan_.map.mailbox_endpoint(*plan_.topology, actor, true);
        if (!endpoint) return endpoint.error();
        SimulatedEvaluator evaluator{actor, zmq::socket_t(context_, zmq::socket_type::pull), {}};
        evaluator.mailbox.set(zmq::sockopt::linger, 0);
        evaluator.mailbox.set(zmq::sockopt::rcvhwm, static_cast<int>(plan_.topology->find(actor)->mailbox_capacity));
        try {
          evaluator.mailbox.bind(*endpoint);
        } catch (const zmq::error_t& error) {
          return make_error(Errc::io_error, "simulated " + actor + " cannot listen at " + *endpoint + ": " +
                                                error.what() + " (descriptors: ulimit -n)");
        }
        node.evaluators.push_back(std::move(evaluator));
      }
      alive_evaluators_ += node.evaluators.size();
      nodes_.push_back(std::move(node));
    }
    ::fcntl(plan_.command_fd, F_SETFL, ::fcntl(plan_.command_fd, F_GETFL) | O_NONBLOCK);
    rebuild_poll_items();
    return {};
  }

  void account(double now) {
    phase_->busy_ms += (now - last_account_ms_) * static_cast<double>(busy_evaluators_);
    phase_->alive_ms += (now - last_account_ms_) * static_cast<double>(alive_evaluators_);
    last_account_ms_ = now;
  }

  void beat_and_join(double now) {
    for (auto& node : nodes_) {
      if (!node.alive) continue;
      if (!node.welcomed && now >= node.next_join_ms) {
        node.next_join_ms = now + kJoinAgainMs;
        send_to_head(node, runtime::envelope_frame([&](msg::Envelope::Builder envelope) {
          envelope.setSender(node.name);
          auto join = envelope.getBody().initNodeJoin();
          join.setNode(node.name);
          const runtime::NodeAddress* address = plan_.map.find(node.name);
          join.setHost(address->host);
          join.setBindHost(address->bind_host);
          join.setPortBase(address->port_base);
          join.setPid(::getpid());
          join.setIncarnation(node.incarnation);
        }));
      }
      if (node.welcomed && now >= node.next_beat_ms) {
        node.next_beat_ms = now + plan_.topology->network.heartbeat_ms;
        std::vector<runtime::ProcessView> processes;
        for (const auto& evaluator : node.evaluators) {
          runtime::ProcessView process;
          process.name = evaluator.name;
          process.pid = ::getpid();
          process.incarnation = node.incarnation;
          process.report_age_seconds = 0.5;
          processes.push_back(std::move(process));
        }
        send_to_head(node, runtime::envelope_frame([&](msg::Envelope::Builder envelope) {
          envelope.setSender(node.name);
          auto beat = envelope.getBody().initNodeHeartbeat();
          beat.setNode(node.name);
          beat.setIncarnation(node.incarnation);
          beat.setSequence(++node.sequence);
          runtime::write_processes(processes, beat.initProcesses(static_cast<unsigned>(processes.size())));
        }));
        ++phase_->heartbeats_sent;
      }
    }
  }

  void send_to_head(SimulatedNode& node, zmq::message_t frame) {
    (void)node.head.send(frame, zmq::send_flags::dontwait);  // a full pipe: the next beat follows
  }

  void to_oracle(SimulatedNode& node, const std::string& sender, const std::function<void(msg::Envelope::Builder)>& fill) {
    node.unsent.push_back(runtime::envelope_frame([&](msg::Envelope::Builder envelope) {
      envelope.setSender(sender);
      envelope.setRecipient("oracle");
      fill(envelope);
    }));
  }

  void flush(SimulatedNode& node) {
    while (node.alive && !node.unsent.empty()) {
      if (!node.oracle.send(node.unsent.front(), zmq::send_flags::dontwait)) return;
      node.unsent.pop_front();
    }
  }

  void send_ready(SimulatedNode& node, const SimulatedEvaluator& evaluator) {
    to_oracle(node, evaluator.name, [&](msg::Envelope::Builder envelope) {
      auto ready = runtime::init_payload<msg::EvaluatorReady>(envelope);
      ready.setIncarnation(node.incarnation);
      ready.setSlots(1);
    });
  }

  void complete_due(double now) {
    while (!due_.empty() && std::get<0>(due_.top()) <= now) {
      const auto [at, node_index, evaluator_index, serial] = due_.top();
      due_.pop();
      SimulatedNode& node = nodes_[node_index];
      if (!node.alive) continue;
      SimulatedEvaluator& evaluator = node.evaluators[evaluator_index];
      if (evaluator.jobs.empty() || evaluator.jobs.front().serial != serial) continue;  // ended early
      Job job = std::move(evaluator.jobs.front());
      evaluator.jobs.pop_front();
      const auto candidate = job.candidate->getRoot<msg::Candidate>().asReader();
      to_oracle(node, evaluator.name, [&](msg::Envelope::Builder envelope) {
        auto verdict = runtime::init_payload<msg::Verdict>(envelope);
        verdict.setHonest(true);
        auto result = verdict.initResult();
        result.setCandidate(candidate);
        result.setEvaluator(evaluator.name);
        result.setCompiled(true);
        result.setCorrect(true);
        result.setTrials(1);
        result.setTrialsPassed(1);
        result.setSpeedup(1.0);
      });
      send_ready(node, evaluator);
      ++phase_->answered;
      if (evaluator.jobs.empty()) {
        --busy_evaluators_;
      } else {
        due_.emplace(at + evaluator.jobs.front().duration_ms, node_index, evaluator_index, evaluator.jobs.front().serial);
      }
    }
  }

  void on_request(std::size_t node_index, int evaluator_index, msg::Envelope::Reader envelope) {
    const auto request = runtime::payload_of<msg::EvalRequest>(envelope);
    if (!request) return;  // control news (peerLost of another node's actors): nothing to move
    const int64_t latency = runtime::system_unix_ms() - envelope.getSentUnixMs();
    ++phase_->latency_ms[latency];
    ++phase_->requests;
    if (request->getAttempt() > 1) ++phase_->redispatched;
    Job job;
    job.candidate = std::make_unique<capnp::MallocMessageBuilder>();
    job.candidate->setRoot(request->getCandidate());
    job.duration_ms = instant_ ? 0.0 : times_.draw_ms();
    job.serial = ++serials_;
    SimulatedEvaluator& evaluator = nodes_[node_index].evaluators[evaluator_index];
    evaluator.jobs.push_back(std::move(job));
    if (evaluator.jobs.size() == 1) {
      ++busy_evaluators_;
      due_.emplace(steady_ms() + evaluator.jobs.front().duration_ms, node_index, evaluator_index, evaluator.jobs.front().serial);
    }
  }

  void on_from_head(SimulatedNode& node, msg::Envelope::Reader envelope) {
    const auto body = envelope.getBody();
    if (body.isNodeHeartbeat()) {
      ++phase_->heartbeats_received;
    } else if (body.isNodeWelcome()) {
      if (body.getNodeWelcome().getRefused().size() != 0) {
        std::fprintf(stderr, "simulated node %s refused: %s\n", node.name.c_str(),
                     body.getNodeWelcome().getRefused().cStr());
        return;
      }
      if (node.welcomed) return;
      node.welcomed = true;
      for (const auto& evaluator : node.evaluators) send_ready(node, evaluator);
    }
  }

  // Every envelope of the frames waiting in `socket` (one, a batch back to back, or two parts).
  template <typename Handle>
  void drain(zmq::socket_t& socket, Handle&& handle) {
    const runtime::DecodeLimits limits{};
    for (int frames = 0; frames < 256; ++frames) {
      zmq::message_t frame;
      if (!socket.recv(frame, zmq::recv_flags::dontwait)) return;
      const std::span<const std::byte> bytes(static_cast<const std::byte*>(frame.data()), frame.size());
      if (frame.more()) {
        zmq::message_t tail;
        if (!socket.recv(tail, zmq::recv_flags::dontwait)) continue;
        const std::span<const std::byte> tail_bytes(static_cast<const std::byte*>(tail.data()), tail.size());
        auto decoded = runtime::decode_checked_parts<msg::Envelope>(bytes, tail_bytes, limits);
        if (decoded) handle(decoded->template root<msg::Envelope>());
        continue;
      }
      for (std::span<const std::byte> rest = bytes; !rest.empty();) {
        auto length = runtime::first_message_bytes(rest);
        if (!length) break;
        const std::shared_ptr<const void> borrowed(std::shared_ptr<void>(), rest.data());
        auto decoded = runtime::decode_checked<msg::Envelope>(rest.first(*length), borrowed, limits);
        if (decoded) handle(decoded->template root<msg::Envelope>());
        rest = rest.subspan(*length);
      }
    }
  }

  void rebuild_poll_items() {
    items_.assign(1, zmq::pollitem_t{nullptr, plan_.command_fd, ZMQ_POLLIN, 0});
    targets_.assign(1, PollTarget{0, -1});
    for (std::size_t index = 0; index < nodes_.size(); ++index) {
      SimulatedNode& node = nodes_[index];
      if (!node.alive) continue;
      items_.push_back({node.head.handle(), 0, ZMQ_POLLIN, 0});
      targets_.push_back({index, -1});
      for (std::size_t evaluator = 0; evaluator < node.evaluators.size(); ++evaluator) {
        items_.push_back({node.evaluators[evaluator].mailbox.handle(), 0, ZMQ_POLLIN, 0});
        targets_.push_back({index, static_cast<int>(evaluator)});
      }
    }
  }

  void wait_and_receive(double timeout_ms) {
    runtime::poll_sockets(items_.data(), items_.size(), std::chrono::milliseconds(static_cast<int64_t>(timeout_ms)));
    // A closed pipe (the head is gone) is POLLHUP, which zmq_poll reports as an error.
    if (items_[0].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) read_commands();
    for (std::size_t item = 1; item < items_.size() && item < targets_.size(); ++item) {
      if (!(items_[item].revents & ZMQ_POLLIN)) continue;
      const PollTarget target = targets_[item];
      SimulatedNode& node = nodes_[target.node];
      if (!node.alive) continue;
      if (target.evaluator < 0) {
        drain(node.head, [&](msg::Envelope::Reader envelope) { on_from_head(node, envelope); });
      } else {
        drain(node.evaluators[target.evaluator].mailbox,
              [&](msg::Envelope::Reader envelope) { on_request(target.node, target.evaluator, envelope); });
      }
    }
  }

  void read_commands() {
    char buffer[4096];
    while (true) {
      const ssize_t got = ::read(plan_.command_fd, buffer, sizeof buffer);
      if (got == 0) {
        ended_ = true;
        return;
      }
      if (got < 0) return;
      commands_.append(buffer, static_cast<std::size_t>(got));
      for (std::size_t end; (end = commands_.find('\n')) != std::string::npos;) {
        const std::string line = commands_.substr(0, end);
        commands_.erase(0, end + 1);
        command(line);
      }
    }
  }

  void command(const std::string& line) {
    account(steady_ms());
    if (line.rfind("phase ", 0) == 0) {
      phase_ = &phases_[line.substr(6)];
      if (line == "phase saturate") end_every_job_now();
    } else if (line.rfind("kill ", 0) == 0) {
      kill(line.substr(5));
    } else if (line == "end") {
      ended_ = true;
    }
  }

  // From now on evaluations take no time, and those running end now.
  void end_every_job_now() {
    instant_ = true;
    const double now = steady_ms();
    for (std::size_t node = 0; node < nodes_.size(); ++node) {
      for (std::size_t evaluator = 0; evaluator < nodes_[node].evaluators.size(); ++evaluator) {
        for (Job& job : nodes_[node].evaluators[evaluator].jobs) {
          job.duration_ms = 0;
          job.serial = ++serials_;
        }
        if (!nodes_[node].evaluators[evaluator].jobs.empty()) {
          due_.emplace(now, node, evaluator, nodes_[node].evaluators[evaluator].jobs.front().serial);
        }
      }
    }
  }

  void kill(const std::string& name) {
    for (auto& node : nodes_) {
      if (node.name != name || !node.alive) continue;
      node.alive = false;
      node.killed_ms = steady_ms();
      for (auto& evaluator : node.evaluators) {
        if (!evaluator.jobs.empty()) --busy_evaluators_;
        evaluator.jobs.clear();
        evaluator.mailbox.close();
      }
      alive_evaluators_ -= node.evaluators.size();
      node.head.close();
      node.oracle.close();
      node.unsent.clear();
    }
    rebuild_poll_items();
  }

  void write_report() {
    account(steady_ms());
    Json report;
    Json phases = Json::object();
    for (const auto& [name, counts] : phases_) {
      Json latencies = Json::array();
      for (const auto& [ms, count] : counts.latency_ms) latencies.push_back(Json::array({ms, count}));
      phases[name] = Json{{"heartbeats_sent", counts.heartbeats_sent},
                          {"heartbeats_received", counts.heartbeats_received},
                          {"requests", counts.requests},
                          {"redispatched", counts.redispatched},
                          {"answered", counts.answered},
                          {"latency_ms", latencies},
                          {"busy_ms", counts.busy_ms},
                          {"alive_ms", counts.alive_ms}};
    }
    report["phases"] = phases;
    Json killed = Json::object();
    for (const auto& node : nodes_) {
      if (node.killed_ms >= 0) killed[node.name] = node.killed_ms;
    }
    report["killed"] = killed;
    const std::string text = json_text(report) + "\n";
    for (std::size_t written = 0; written < text.size();) {
      const ssize_t wrote = ::write(plan_.report_fd, text.data() + written, text.size() - written);
      if (wrote <= 0) break;
      written += static_cast<std::size_t>(wrote);
    }
  }

  const SimulatedNodesPlan& plan_;
  EvaluationTimeModel times_;
  zmq::context_t context_;
  std::vector<SimulatedNode> nodes_;
  std::map<std::string, PhaseCounts> phases_;
  PhaseCounts* phase_;
  // (when, node, evaluator, job serial): the running jobs' ends, soonest first.
  using Due = std::tuple<double, std::size_t, std::size_t, uint64_t>;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  uint64_t serials_ = 0;
  bool instant_ = false;  // the saturate phase: evaluations take no time
  std::vector<zmq::pollitem_t> items_;
  std::vector<PollTarget> targets_;
  std::string commands_;
  std::size_t busy_evaluators_ = 0;
  std::size_t alive_evaluators_ = 0;
  double last_account_ms_ = 0;
  bool ended_ = false;
};

}  // namespace

int run_simulated_nodes(const SimulatedNodesPlan& plan) {
  Simulation simulation(plan);
  const int status = simulation.run();
  return status;
}

}  // namespace drk::bench
