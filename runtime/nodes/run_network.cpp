#include "runtime/nodes/run_network.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

namespace drk::runtime {
namespace {

std::string node_file(const std::string& run_dir) { return run_dir + "/node.yaml"; }
std::string network_file(const std::string& run_dir) { return run_dir + "/network.yaml"; }

}  // namespace

Status write_run_network(const std::string& run_dir, const NodeIdentity& identity, const NetworkMap& map) {
  if (auto written = write_network_map(map, network_file(run_dir)); !written) return written;
  YAML::Emitter out;
  out << YAML::Comment("The node this run directory belongs to (written by drkernel)");
  out << YAML::BeginMap << YAML::Key << "node" << YAML::Value << identity.node << YAML::Key << "keys"
      << YAML::Value << identity.keys << YAML::EndMap;
  std::ofstream file(node_file(run_dir), std::ios::trunc);
  file << out.c_str() << "\n";
  if (!file) return make_error(Errc::io_error, "cannot write '" + node_file(run_dir) + "': check the run directory");
  return {};
}

Result<std::optional<CurveIdentity>> load_optional_curve(const std::string& keys, const std::string& name) {
  if (keys.empty()) return std::optional<CurveIdentity>();
  auto identity = load_curve_identity(keys, name);
  if (!identity) return identity.error();
  return std::optional<CurveIdentity>(std::move(*identity));
}

Result<TransportNetwork> load_run_network(const std::string& run_dir) {
  TransportNetwork network;
  if (!std::filesystem::exists(network_file(run_dir))) return network;
  auto map = read_network_map(network_file(run_dir));
  if (!map) return map.error();
  network.map = std::move(*map);
  try {
    const YAML::Node node = YAML::LoadFile(node_file(run_dir));
    network.local_node = node["node"].as<std::string>();
    auto curve = load_optional_curve(node["keys"].as<std::string>(""), network.local_node);
    if (!curve) return curve.error();
    network.curve = std::move(*curve);
  } catch (const YAML::Exception& error) {
    return make_error(Errc::parse_error, node_file(run_dir) + ": " + error.msg +
                                             " (written by drkernel: start the run or the node again)");
  }
  return network;
}

}  // namespace drk::runtime
