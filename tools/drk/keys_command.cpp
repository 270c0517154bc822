// drk keys generate|show: the CURVE key pairs that secure the links between nodes
// (runtime/curve_keys.h, docs/security.md).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "runtime/curve_keys.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

constexpr const char* kKeysHelp = R"(usage: drk keys generate DIR NAME [NAME ...] [--force]
       drk keys show DIR

The links between the machines of a run are encrypted and authenticated with CURVE. Every
identity (the head is `head`, a node is its node name) has a key pair; a machine admits the
identities whose NAME.pub is in its key directory (topology key `network.keys: DIR`).

  generate   writes DIR/NAME.key (public and secret key, mode 0600) and DIR/NAME.pub (public
             key) for each NAME; refuses to replace existing files unless --force is given.
             Then give each machine its own NAME.key and every .pub, and nothing else.
  show       lists the identities of DIR with their public keys, and which key pairs are here
             (secret keys are never printed).

  --force    replace existing NAME.key and NAME.pub (the old key stops working everywhere)

See docs/security.md.
)";

int usage_error(const std::string& message) {
  std::cerr << "drk keys: " << message << "\n\n" << kKeysHelp;
  return 2;
}

int generate(const std::string& dir, const std::vector<std::string>& names, bool force) {
  for (const auto& name : names) {
    if (auto valid = runtime::check_identity_name(name); !valid) {
      std::cerr << "drk keys: " << valid.error().message << "\n";
      return 2;
    }
  }
  for (const auto& name : names) {
    auto pair = runtime::generate_curve_key_pair();
    if (!pair) {
      std::cerr << "drk keys: " << pair.error().message << "\n";
      return 1;
    }
    if (auto written = runtime::write_key_pair(dir, name, *pair, force); !written) {
      std::cerr << "drk keys: " << written.error().message << "\n";
      return 1;
    }
    const auto base = (std::filesystem::path(dir) / name).string();
    std::cout << "wrote " << base << ".key (secret, mode 0600) and " << base << ".pub  public key "
              << pair->public_key << "\n";
  }
  const auto node = std::find_if(names.begin(), names.end(), [](const std::string& name) { return name != "head"; });
  const std::string example = node != names.end() ? *node : names.front();
  std::cout << "\nnext: each machine gets, in its key directory, its own NAME.key and every .pub of " << dir
            << ",\nand no other .key. For example, for '" << example << "':\n"
            << "  scp " << (std::filesystem::path(dir) / example).string() << ".key "
            << (std::filesystem::path(dir) / "*.pub").string() << " " << example << ":" << dir << "/\n"
            << "Name the directory in the topology with `network.keys: " << dir
            << "`; `drk keys show " << dir << "` lists what a directory holds.\n";
  return 0;
}

int show(const std::string& dir) {
  auto allowed = runtime::read_allowed_keys(dir);
  if (!allowed) {
    std::cerr << "drk keys: " << allowed.error().message << "\n";
    return 1;
  }
  std::set<std::string> pairs_here;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    if (entry.path().extension() == ".key" && entry.path().filename().string().front() != '.')
      pairs_here.insert(entry.path().stem().string());
  std::set<std::string> identities(pairs_here);
  for (const auto& [name, key] : *allowed) identities.insert(name);
  if (identities.empty()) {
    std::cout << "no identities in " << dir << ": `drk keys generate " << dir << " NAME` makes one\n";
    return 0;
  }
  std::size_t width = 8;
  for (const auto& name : identities) width = std::max(width, name.size());
  auto pad = [&](const std::string& text) { return text + std::string(width - text.size() + 2, ' '); };
  std::cout << pad("IDENTITY") << "PUBLIC KEY                                  KEY PAIR HERE\n";
  int problems = 0;
  for (const auto& name : identities) {
    const auto listed = allowed->find(name);
    std::string public_key = listed != allowed->end() ? listed->second : std::string();
    std::string pair_note = "no";
    if (pairs_here.count(name)) {
      auto pair = runtime::read_key_pair(dir, name);
      if (!pair) {
        std::cerr << "drk keys: " << pair.error().message << "\n";
        ++problems;
        pair_note = "unusable (see above)";
      } else {
        pair_note = "yes (" + name + ".key)";
        if (public_key.empty()) {
          public_key = pair->public_key;
          pair_note += ", but no " + name + ".pub: not admitted by this machine";
        } else if (public_key != pair->public_key) {
          pair_note += ", but " + name + ".pub holds another key";
          ++problems;
        }
      }
    }
    std::cout << pad(name) << (public_key.empty() ? std::string(40, '-') : public_key) << "    " << pair_note << "\n";
  }
  std::cout << allowed->size() << " identit" << (allowed->size() == 1 ? "y" : "ies")
            << " allowed to connect (every .pub of " << dir << ")\n";
  return problems ? 1 : 0;
}

}  // namespace

int cmd_keys(const Args& args) {
  bool force = false;
  std::vector<std::string> words;
  for (const auto& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << kKeysHelp;
      return 0;
    }
    if (arg == "--force") force = true;
    else if (arg.starts_with("--")) return usage_error("unknown option '" + arg + "'");
    else words.push_back(arg);
  }
  if (words.empty()) return usage_error("missing subcommand: generate or show");
  if (words[0] == "generate") {
    if (words.size() < 3) return usage_error("generate needs a directory and at least one identity name");
    return generate(words[1], {words.begin() + 2, words.end()}, force);
  }
  if (words[0] == "show") {
    if (words.size() != 2 || force) return usage_error("show takes one directory and no options");
    return show(words[1]);
  }
  return usage_error("unknown subcommand '" + words[0] + "' (generate or show)");
}

}  // namespace drk::tools
