// drk serve: drkernel as the reward service of a Python trainer, behind an HTTP API compatible
// with KernelGYM's (docs/gateway.md; tools/gateway/). The topology gives the run directory (the
// gateway's state lives in RUN_DIR/gateway: its task store and imported references), the device
// (experiment.device), the reward's weights (experiment.reward) and the number of workers (its
// evaluator actors' count). Runs until SIGINT or SIGTERM. With --dashboard, the dashboard's
// service (tools/observe/dashboard_service.h) shows the gateway's queue and workers as actors.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <optional>

#include "actors/evaluator/engine/shared_gpu.h"
#include "actors/oracle/reward.h"
#include "kernels/catalog/task.h"
#include "kernels/compile/command_runner.h"
#include "runtime/command_line.h"
#include "runtime/http/bearer_auth.h"
#include "runtime/http/http_server.h"
#include "runtime/log.h"
#include "runtime/topology/topology.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"
#include "tools/drk/kernelbench_import.h"
#include "tools/drk/cuda_device_count.h"
#include "tools/gateway/engine_task_evaluator.h"
#include "tools/gateway/evaluation_result.h"
#include "tools/gateway/gateway.h"
#include "tools/gateway/gateway_routes.h"
#include "runtime/inspection/inspection_view.h"
#include "tools/observe/dashboard_options.h"
#include "tools/observe/dashboard_service.h"

namespace drk::tools {
namespace {

constexpr const char* kTokenVariable = "DRK_GATEWAY_TOKEN";

struct ServeArgs {
  std::string topology;
  std::vector<std::string> overrides;
  std::string listen = "127.0.0.1";
  uint16_t port = 8000;
  std::string token_file;
  size_t queue_capacity = 256;
  size_t workers = 0;  // 0: the topology's evaluator count
  std::string dashboard;  // [ADDR:]PORT; empty: none
  std::string dashboard_token_file;
  evaluator::EngineOptions engine;
};

int fail(const std::string& message) {
  log::error() << "drk serve: " << message;
  return 1;
}

// The gateway as the dashboard's live view: its queue is the mailbox of an actor `gateway`, each
// worker an Evaluator whose current handler is its task, all in this process.
runtime::SystemView gateway_view(gateway::Gateway& gateway, const std::string& topology, const std::string& state_dir) {
  runtime::SystemView view;
  view.topology = topology;
  view.run_dir = state_dir;
  runtime::ProcessView process;
  process.name = "serve";
  process.pid = ::getpid();
  view.processes.push_back(process);
  const Json queue = gateway.queue_status().body;
  runtime::ActorView front;
  front.name = "gateway";
  front.role = "gateway";
  front.process = "serve";
  front.pid = process.pid;
  front.status = runtime::ActorStatus::running;
  front.mailbox_depth = queue.value("queue_size", uint64_t{0});
  front.mailbox_capacity = queue.value("capacity", uint64_t{0});
  view.actors.push_back(front);
  // Held in a local: a range-for over a member of a temporary dangles before C++23.
  const Json workers = gateway.workers_status().body["workers"];
  for (const Json& worker : workers) {
    runtime::ActorView actor;
    actor.name = worker.value("worker_id", "");
    actor.role = "evaluator";
    actor.process = "serve";
    actor.pid = process.pid;
    const std::string state = worker.value("status", "");
    actor.status = state == "starting"               ? runtime::ActorStatus::starting
                   : state.rfind("failed", 0) == 0 ? runtime::ActorStatus::dead
                                                     : runtime::ActorStatus::running;
    actor.messages_handled = worker.value("tasks_evaluated", uint64_t{0});
    if (worker["current_task"].is_string()) actor.current_handler = worker["current_task"].get<std::string>();
    view.actors.push_back(actor);
  }
  view.training = "serving: " + std::to_string(queue.value("queue_size", 0)) + " queued, " +
                  std::to_string(queue.value("running", 0)) + " running, " +
                  std::to_string(queue.value("completed", 0)) + " completed, " +
                  std::to_string(queue.value("failed", 0)) + " failed";
  return view;
}

int serve(const ServeArgs& args) {
  auto topology = runtime::load_topology(args.topology, args.overrides, this_machine_gpus());
  if (!topology) return fail(topology.error().message);
  auto weights = oracle::reward_weights_from(topology->experiment);
  if (!weights) return fail(weights.error().message);
  evaluator::EngineOptions engine = args.engine;
  if (auto device = topology->experiment["device"]; device && device.IsScalar()) {
    auto parsed = kernels::parse_device(device.Scalar());
    if (!parsed) return fail("experiment.device: " + parsed.error().message);
    engine.device = *parsed;
  }
  auto token = runtime::http::read_bearer_token(args.token_file, kTokenVariable);
  if (!token) return fail(token.error().message);
  auto required = runtime::http::required_token(args.listen, *token,
                                                std::string("give --token-file FILE or set $") + kTokenVariable);
  if (!required) return fail(required.error().message);
  std::optional<observe::DashboardOptions> dashboard;
  if (!args.dashboard.empty()) {
    auto options = observe::dashboard_options(args.dashboard, args.dashboard_token_file);
    if (!options) return fail(options.error().message);
    dashboard = *options;
  }
  auto runner = compile::system_command_runner();
  auto python = find_python_with_torch(std::nullopt, *runner);
  if (!python) return fail(python.error().message);

  gateway::GatewayOptions options;
  options.state_dir = topology->run_dir + "/gateway";
  options.queue_capacity = args.queue_capacity;
  options.workers = args.workers > 0 ? args.workers : std::max<size_t>(1, topology->members("evaluator").size());
  options.device = std::string(kernels::device_name(engine.device));
  options.reward_formula = gateway::reward_formula_json(*weights);
  // The workers evaluate on one GPU at once: they take turns to time and share its memory.
  evaluator::share_one_gpu(engine, options.workers);
  gateway::EngineEvaluatorSettings settings{engine, *weights,
                                            std::make_shared<gateway::ReferenceProblems>(options.state_dir, *python)};
  // SIGINT and SIGTERM are waited for below, by this thread only.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto opened = gateway::Gateway::open(options, [settings](size_t worker) {
    return gateway::EngineTaskEvaluator::create(settings, worker);
  });
  if (!opened) return fail(opened.error().message);
  runtime::http::HttpServerOptions server_options;
  server_options.address = args.listen;
  server_options.port = args.port;
  server_options.bearer_token = *required;
  auto server = runtime::http::HttpServer::start(server_options, gateway::gateway_router(**opened));
  if (!server) return fail(server.error().message);
  log::info() << "drk serve: listening on http://" << args.listen << ":" << (*server)->port() << " ("
              << options.workers << " worker(s) on " << options.device << ", state in " << options.state_dir << ")";
  std::unique_ptr<observe::DashboardService> dashboard_service;
  if (dashboard) {
    // The state directory holds no run's archive: the dashboard shows the gateway live, and its
    // results are at /results and /metrics.
    auto started = observe::DashboardService::start(*dashboard, options.state_dir, [&, name = topology->name] {
      return gateway_view(**opened, name, options.state_dir);
    });
    if (!started) return fail(started.error().message);
    dashboard_service = std::move(*started);
    std::cout << "dashboard: " << observe::dashboard_url(dashboard->address, dashboard_service->port()) << std::endl;
  }
  int received = 0;
  sigwait(&stop_signals, &received);
  log::info() << "drk serve: stopping (signal " << received << "); unfinished tasks resume at the next start";
  dashboard_service.reset();
  server->reset();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<ServeArgs>();
  args->engine.cache_dir = default_compile_cache_dir();
  CLI::App* serve_command = drk.add_subcommand(
      "serve",
      "serve evaluations over HTTP, compatible with KernelGYM's API (docs/gateway.md)\n"
      "\n"
      "A Python trainer's reward client (verl, OpenRLHF) posts KernelBench-format reference and\n"
      "kernel sources to /evaluate and reads results with our Verifier's verdict and Oracle's reward.");
  serve_command->add_option("TOPOLOGY.yaml", args->topology, "the topology (run directory, device, reward, evaluators)")
      ->required();
  serve_command->add_option("--set", args->overrides, "override a topology key (key=value)")->type_name("KEY=VALUE");
  serve_command->add_option("--listen", args->listen,
                            "the address to listen on (default 127.0.0.1; beyond loopback a bearer token is "
                            "required: --token-file or $DRK_GATEWAY_TOKEN)")
      ->type_name("ADDRESS");
  serve_command->add_option("--port", args->port, "the port (default 8000; 0: a free one)")->type_name("PORT");
  serve_command->add_option("--token-file", args->token_file, "a file holding the bearer token clients must send")
      ->type_name("FILE");
  serve_command->add_option("--queue-capacity", args->queue_capacity,
                            "queued tasks beyond which submissions get 429 (default 256)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  serve_command->add_option("--workers", args->workers,
                            "evaluating threads, each with its own engine (default: the topology's evaluators)")
      ->type_name("N");
  serve_command
      ->add_option("--dashboard", args->dashboard,
                   "serve the dashboard (the gateway's queue and workers live) at [ADDR:]PORT\n"
                   "(loopback unless ADDR says otherwise; docs/dashboard.md)")
      ->type_name("[ADDR:]PORT");
  serve_command
      ->add_option("--dashboard-token-file", args->dashboard_token_file,
                   "a file holding the bearer token the dashboard requires (needed beyond\n"
                   "loopback; or $DRK_DASHBOARD_TOKEN)")
      ->type_name("FILE");
  add_engine_options(*serve_command, args->engine, /*memory_limit=*/true);
  actions[serve_command] = [args] { return serve(*args); };
}

}  // namespace drk::tools
