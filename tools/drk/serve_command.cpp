// drk serve: drkernel as the reward service of a Python trainer, behind an HTTP API compatible
// with KernelGYM's (docs/gateway.md; tools/gateway/). The topology gives the run directory (the
// gateway's state lives in RUN_DIR/gateway: its task store and imported references), the device
// (experiment.device), the reward's weights (experiment.reward) and the number of workers (its
// evaluator actors' count). Runs until SIGINT or SIGTERM.
#include <CLI/CLI.hpp>

#include <csignal>
#include <memory>

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
#include "tools/gateway/engine_task_evaluator.h"
#include "tools/gateway/evaluation_result.h"
#include "tools/gateway/gateway.h"
#include "tools/gateway/gateway_routes.h"

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
  evaluator::EngineOptions engine;
};

int fail(const std::string& message) {
  log::error() << "drk serve: " << message;
  return 1;
}

int serve(const ServeArgs& args) {
  auto topology = runtime::load_topology(args.topology, args.overrides);
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
  auto runner = compile::system_command_runner();
  auto python = find_python_with_torch(std::nullopt, *runner);
  if (!python) return fail(python.error().message);

  gateway::GatewayOptions options;
  options.state_dir = topology->run_dir + "/gateway";
  options.queue_capacity = args.queue_capacity;
  options.workers = args.workers > 0 ? args.workers : std::max<size_t>(1, topology->members("evaluator").size());
  options.device = std::string(kernels::device_name(engine.device));
  options.reward_formula = gateway::reward_formula_json(*weights);
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
  int received = 0;
  sigwait(&stop_signals, &received);
  log::info() << "drk serve: stopping (signal " << received << "); unfinished tasks resume at the next start";
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
  add_engine_options(*serve_command, args->engine, /*memory_limit=*/true);
  actions[serve_command] = [args] { return serve(*args); };
}

}  // namespace drk::tools
