#include "runtime/process_command_line.h"

#include "runtime/command_line.h"
#include "runtime/nodes/curve_keys.h"
#include "runtime/nodes/network_map.h"

namespace drk::runtime {

CLI::App* add_run_command(CLI::App& program, RunOptions& into) {
  CLI::App* run = program.add_subcommand(
      "run",
      "run an experiment\n"
      "\n"
      "Runs an experiment: starts the actors TOPOLOGY.yaml names, each in the process it names,\n"
      "restarts processes that die (supervision), and prints one line per training step.\n"
      "Everything the run writes goes to its run_dir (topology.yaml, causes/, ...).");
  run->add_option("TOPOLOGY.yaml", into.topology_path, "the topology, e.g. configs/quickstart.yaml")
      ->required()
      ->type_name("");
  run->add_option("--set", into.overrides,
                  "override a value of the topology; KEY is a dotted path, e.g.\n"
                  "--set experiment.steps=3, --set actors.evaluator.count=2\n"
                  "(an actors entry is named by its role or name); VALUE is YAML")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  run->add_flag("--fresh", into.fresh,
                "start over: remove what an earlier run left in run_dir\n"
                "(checkpoints, archive); without it the run resumes from them");
  run->add_flag("--dry-run", into.dry_run,
                "resolve and check the topology (`gpus: all` becomes this machine's GPUs),\n"
                "print it and the processes it would start, and exit; nothing starts");
  run->footer("Ctrl-C stops the run in order (exit code 130).");
  return run;
}

CLI::App* add_host_command(CLI::App& program, HostArgs& into) {
  CLI::App* host = program.add_subcommand(
      "host",
      "host one process of a running topology (internal)\n"
      "\n"
      "Hosts the actors of one process of a running experiment (DIR/topology.yaml).\n"
      "`drk run` and `drk node` start these; people do not.");
  host->group("");
  host->add_option("--run-dir", into.run_dir, "the run's directory")->required()->type_name("DIR");
  host->add_option("--process", into.process, "the process of the topology to host")->required()->type_name("NAME");
  host->add_option("--incarnation", into.incarnation, "this start of the process, from the supervisor")
      ->required()
      ->type_name("N");
  return host;
}

CLI::App* add_node_command(CLI::App& program, NodeArgs& into) {
  CLI::App* node = program.add_subcommand(
      "node",
      "join a multi-node run and host the actors placed on this machine\n"
      "\n"
      "Joins this machine to a running `drk run` whose topology lists NAME under `nodes:`, and\n"
      "hosts the actors placed there (node: NAME) until the run ends.");
  node->add_option("--join", into.join, "the head's network.listen address")
      ->required()
      ->type_name("tcp://HEAD:PORT")
      ->check(checked_by([](const std::string& value) -> Status {
        if (auto endpoint = parse_tcp_endpoint(value); !endpoint) return endpoint.error();
        return {};
      }));
  node->add_option("--name", into.name, "this node's name in the topology")
      ->required()
      ->type_name("NAME")
      ->check(checked_by([](const std::string& value) { return check_identity_name(value); }));
  node->add_option("--advertise", into.advertise,
                   "the address other machines reach this one at (default: the\n"
                   "host name; 127.0.0.1 for a head on loopback)")
      ->type_name("HOST");
  node->add_option("--port", into.port, "first tcp port of this node's mailboxes, one per actor (7800)")
      ->type_name("P")
      ->check(CLI::Range(1, 65000).description(""));
  node->add_option("--bind", into.bind_host, "the address its sockets listen on (default 0.0.0.0)")->type_name("HOST");
  node->add_option("--keys", into.keys, "CURVE keys: DIR/NAME.key and DIR/head.pub (drk keys generate)")
      ->type_name("DIR");
  node->add_option("--run-dir", into.run_dir, "where this node writes (default runs/node-NAME)")->type_name("DIR");
  return node;
}

}  // namespace drk::runtime
