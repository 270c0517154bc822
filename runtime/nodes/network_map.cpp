#include "runtime/nodes/network_map.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>

namespace drk::runtime {

const NodeAddress* NetworkMap::find(std::string_view node) const {
  const auto found = nodes.find(node);
  return found == nodes.end() ? nullptr : &found->second;
}

Result<std::string> NetworkMap::mailbox_endpoint(const Topology& topology, std::string_view actor, bool bind) const {
  const auto node = topology.node_of(actor);
  if (!node) {
    return make_error(Errc::not_found, "no actor is named '" + std::string(actor) + "' in topology '" +
                                           topology.name + "'");
  }
  const NodeAddress* address = find(*node);
  if (!address) {
    return make_error(Errc::peer_unavailable, "actor '" + std::string(actor) + "' is on node '" + *node +
                                             "', which has not joined: start it with `drk node --join ...`");
  }
  const auto mailboxes = topology.mailboxes_on(*node);
  const auto position = std::find(mailboxes.begin(), mailboxes.end(), actor) - mailboxes.begin();
  const std::string& host = bind ? address->bind_host : address->host;
  const std::string bracketed = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "tcp://" + bracketed + ":" + std::to_string(address->port_base + position);
}

Result<HostPort> parse_tcp_endpoint(std::string_view endpoint) {
  const auto usage = [&] {
    return make_error(Errc::invalid_argument, "'" + std::string(endpoint) +
                                                  "' is not a tcp endpoint with a port; expected tcp://HOST:PORT, "
                                                  "e.g. tcp://10.0.0.1:7700");
  };
  if (endpoint.rfind("tcp://", 0) != 0) return usage();
  const std::string_view rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return usage();
  std::string_view host = rest.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const std::string_view digits = rest.substr(colon + 1);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (error != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) return usage();
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

NodeAddress head_address(const NetworkSettings& network, std::string public_key) {
  NodeAddress address;
  const auto listen = parse_tcp_endpoint(network.listen);  // validated with the topology
  address.bind_host = listen ? listen->host : "0.0.0.0";
  address.port_base = listen ? static_cast<uint16_t>(listen->port + 1) : 0;
  if (!network.advertise.empty()) {
    address.host = network.advertise;
  } else if (address.bind_host != "0.0.0.0" && address.bind_host != "*" && address.bind_host != "::") {
    address.host = address.bind_host;
  } else {
    char name[256] = {};
    address.host = ::gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
  }
  address.public_key = std::move(public_key);
  return address;
}

std::string network_map_text(const NetworkMap& map) {
  YAML::Emitter out;
  out << YAML::Comment("Where every node of this run is reached (written by drkernel)");
  out << YAML::BeginMap;
  for (const auto& [name, address] : map.nodes) {
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "host" << YAML::Value << address.host;
    out << YAML::Key << "bind_host" << YAML::Value << address.bind_host;
    out << YAML::Key << "port_base" << YAML::Value << address.port_base;
    out << YAML::Key << "public_key" << YAML::Value << YAML::DoubleQuoted << address.public_key;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status write_network_map(const NetworkMap& map, const std::string& path, FileSystem& files) {
  return write_file_atomically(files, path, network_map_text(map));
}

Result<NetworkMap> read_network_map(const std::string& path, FileSystem& files) {
  auto text = files.read_file(path);
  if (!text) return make_error(text.error().code, text.error().message + " (written by drkernel: start the run again)");
  return parse_network_map(*text, path);
}

Result<NetworkMap> parse_network_map(const std::string& text, const std::string& path) {
  NetworkMap map;
  try {
    const YAML::Node document = YAML::Load(text);
    if (!document.IsMap()) {
      return make_error(Errc::parse_error, path + ": expected a map of node names to addresses");
    }
    for (const auto& entry : document) {
      NodeAddress address;
      address.host = entry.second["host"].as<std::string>();
      address.bind_host = entry.second["bind_host"].as<std::string>();
      address.port_base = entry.second["port_base"].as<uint16_t>();
      address.public_key = entry.second["public_key"].as<std::string>("");
      map.nodes.emplace(entry.first.as<std::string>(), std::move(address));
    }
  } catch (const YAML::Exception& error) {
    return make_error(Errc::parse_error, path + ":" + std::to_string(error.mark.line + 1) + ": " + error.msg +
                                             " (this file is written by drkernel: start the run again)");
  }
  return map;
}

}  // namespace drk::runtime
