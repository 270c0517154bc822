#include "tools/drk/run_command.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "runtime/command_line.h"
#include "runtime/inspection/inspection_board.h"
#include "runtime/log.h"
#include "runtime/nodes/node_main.h"
#include "runtime/process_command_line.h"
#include "runtime/process_main.h"
#include "tools/drk/commands.h"
#include "tools/drk/cuda_device_count.h"
#include "tools/observe/dashboard_options.h"
#include "tools/observe/dashboard_service.h"

namespace drk::tools {
namespace {

RunSummary& run_summary() {
  static RunSummary summary;
  return summary;
}

struct DashboardArgs {
  std::string address;  // [ADDR:]PORT; empty: no dashboard
  std::string token_file;
};

// The dashboard as the head's service: it lives as long as the run.
class DashboardHeadService : public runtime::HeadService {
 public:
  explicit DashboardHeadService(std::unique_ptr<observe::DashboardService> service) : service_(std::move(service)) {}

 private:
  std::unique_ptr<observe::DashboardService> service_;
};

// The experiment's `dashboard: [ADDR:]PORT` in the resolved topology, or "" when it has none.
std::string experiment_dashboard(const std::string& run_dir) {
  const YAML::Node topology = YAML::LoadFile(run_dir + "/topology.yaml");
  const YAML::Node address = topology["experiment"]["dashboard"];
  return address && address.IsScalar() ? address.Scalar() : "";
}

// The dashboard as the head's service, at `given` (--dashboard) or else at the experiment's
// `dashboard:`; none without either.
runtime::HeadServiceStart dashboard_start(std::optional<observe::DashboardOptions> given, std::string token_file) {
  return [given, token_file](const runtime::InspectionBoard& board,
                             const std::string& run_dir) -> Result<std::unique_ptr<runtime::HeadService>> {
    std::optional<observe::DashboardOptions> options = given;
    if (!options) {
      const std::string address = experiment_dashboard(run_dir);
      if (address.empty()) return std::unique_ptr<runtime::HeadService>();
      auto configured = observe::dashboard_options(address, token_file);
      if (!configured) return make_error(configured.error().code, "experiment.dashboard: " + configured.error().message);
      options = *configured;
    }
    auto service = observe::DashboardService::start(*options, run_dir, [&board] { return board.view(); });
    if (!service) return service.error();
    std::cout << "dashboard: " << observe::dashboard_url(options->address, (*service)->port()) << std::endl;
    return std::unique_ptr<runtime::HeadService>(std::make_unique<DashboardHeadService>(std::move(*service)));
  };
}

}  // namespace

void set_run_summary(RunSummary summary) { run_summary() = std::move(summary); }

void add_run_commands(CLI::App& drk, Actions& actions) {
  auto run = std::make_shared<runtime::RunOptions>();
  auto dashboard = std::make_shared<DashboardArgs>();
  CLI::App* run_command = runtime::add_run_command(drk, *run);
  run_command
      ->add_option("--dashboard", dashboard->address,
                   "serve the run's live dashboard, JSON and Prometheus /metrics over HTTP\n"
                   "at [ADDR:]PORT (loopback unless ADDR says otherwise; port 0: a free one;\n"
                   "docs/dashboard.md)")
      ->type_name("[ADDR:]PORT")
      ->check(runtime::checked_by([](const std::string& value) -> Status {
        if (auto parsed = observe::parse_dashboard_address(value); !parsed) return parsed.error();
        return {};
      }));
  run_command
      ->add_option("--dashboard-token-file", dashboard->token_file,
                   "a file holding the bearer token the dashboard requires (needed beyond\n"
                   "loopback; or $DRK_DASHBOARD_TOKEN)")
      ->type_name("FILE");
  actions[run_command] = [run, dashboard] {
    run->summary = run_summary();
    std::optional<observe::DashboardOptions> given;
    if (!dashboard->address.empty()) {
      // Refused before the run starts: a dashboard beyond loopback without a token.
      auto options = observe::dashboard_options(dashboard->address, dashboard->token_file);
      if (!options) {
        log::error() << "drk run: " << options.error().message;
        return 1;
      }
      given = *options;
    }
    run->head_service = dashboard_start(given, dashboard->token_file);
    run->visible_gpus = this_machine_gpus();
    return runtime::run_head(*run);
  };
  auto host = std::make_shared<runtime::HostArgs>();
  actions[runtime::add_host_command(drk, *host)] = [host] { return runtime::run_host(*host); };
  auto node = std::make_shared<runtime::NodeArgs>();
  actions[runtime::add_node_command(drk, *node)] = [node] { return runtime::run_node(*node); };
}

}  // namespace drk::tools
