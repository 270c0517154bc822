#include "runtime/nodes/run_network.h"

#include <yaml-cpp/yaml.h>

namespace drk::runtime {
namespace {

std::string node_file(const std::string& run_dir) { return run_dir + "/node.yaml"; }
std::string network_file(const std::string& run_dir) { return run_dir + "/network.yaml"; }

std::string node_text(const NodeIdentity& identity) {
  YAML::Emitter out;
  out << YAML::Comment("The node this run directory belongs to (written by drkernel)");
  out << YAML::BeginMap << YAML::Key << "node" << YAML::Value << identity.node << YAML::Key << "keys"
      << YAML::Value << identity.keys << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

Status write_run_network(const std::string& run_dir, const NodeIdentity& identity, const NetworkMap& map,
                         FileSystem& files) {
  // network.yaml, which makes the run directory a multi-node one, goes last.
  if (auto written = write_file_atomically(files, node_file(run_dir), node_text(identity)); !written) return written;
  return write_network_map(map, network_file(run_dir), files);
}

Result<std::optional<CurveIdentity>> load_optional_curve(const std::string& keys, const std::string& name) {
  if (keys.empty()) return std::optional<CurveIdentity>();
  auto identity = load_curve_identity(keys, name);
  if (!identity) return identity.error();
  return std::optional<CurveIdentity>(std::move(*identity));
}

Result<TransportNetwork> load_run_network(const std::string& run_dir, FileSystem& files) {
  TransportNetwork network;
  if (!files.exists(network_file(run_dir))) return network;
  auto map = read_network_map(network_file(run_dir), files);
  if (!map) return map.error();
  network.map = std::move(*map);
  const std::string restart = " (written by drkernel: start the run or the node again)";
  auto text = files.read_file(node_file(run_dir));
  if (!text) return make_error(text.error().code, text.error().message + restart);
  try {
    const YAML::Node node = YAML::Load(*text);
    network.local_node = node["node"].as<std::string>();
    auto curve = load_optional_curve(node["keys"].as<std::string>(""), network.local_node);
    if (!curve) return curve.error();
    network.curve = std::move(*curve);
  } catch (const YAML::Exception& error) {
    return make_error(Errc::parse_error, node_file(run_dir) + ": " + error.msg + restart);
  }
  return network;
}

}  // namespace drk::runtime
