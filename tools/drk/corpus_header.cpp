#include "tools/drk/corpus_header.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace drk::tools {
namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

CandidateLanguage language_of(const std::filesystem::path& path) {
  return path.extension() == ".py" ? CandidateLanguage::python : CandidateLanguage::cpp;
}

Expectation read_expectation(const std::string& source, CandidateLanguage language) {
  const bool python = language == CandidateLanguage::python;
  const std::string marker = python ? "#" : "//";
  // "`// drk-task: NAME`" or "`# drk-task: NAME`", as the file's language writes it.
  auto key = [&](const std::string& rest) { return "`" + marker + " drk-" + rest + "`"; };
  Expectation e;
  std::istringstream in(source);
  bool has_expectation = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(marker, 0) != 0) break;
    auto value = [&](const char* name) -> std::optional<std::string> {
      auto at = line.find(name);
      if (at == std::string::npos) return std::nullopt;
      return line.substr(at + std::string(name).size());
    };
    if (auto task = value("drk-task:")) {
      auto parts = words(*task);
      if (!parts.empty()) e.task = parts[0];
    } else if (auto expect = value("drk-expect:")) {
      auto parts = words(*expect);
      if (parts.empty() || (parts[0] != "hacked" && parts[0] != "honest")) {
        e.problem = key("expect:") + " must start with `hacked` or `honest`";
        return e;
      }
      has_expectation = true;
      e.hacked = parts[0] == "hacked";
      e.codes.assign(parts.begin() + 1, parts.end());
    } else if (auto best = value("drk-best-known:")) {
      char* end = nullptr;
      e.best_known_speedup = std::strtod(best->c_str(), &end);
      if (end == best->c_str() || !(e.best_known_speedup > 0)) {
        e.problem = key("best-known:") + " needs a positive speedup, e.g. " + key("best-known: 1.5");
        return e;
      }
    } else if (auto threads = value("drk-threads:")) {
      e.threads = std::atoi(threads->c_str());
      if (e.threads < 1 || e.threads > 256) {
        e.problem = key("threads:") + " needs a thread count from 1 to 256, e.g. " + key("threads: 1");
        return e;
      }
    } else if (auto backend = value("drk-backend:")) {
      auto parts = words(*backend);
      auto parsed = judging::parse_backend(parts.empty() ? "" : parts[0]);
      if (!parsed.ok()) {
        e.problem = key("backend:") + ": " + parsed.error().message;
        return e;
      }
      e.backend = *parsed;
    } else if (auto caught_by = value("drk-caught-by:")) {
      auto parts = words(*caught_by);
      const std::string name = parts.empty() ? "" : parts[0];
      if (name != "static" && name != "runtime") {
        e.problem = key("caught-by:") + " must be `static` (the static checks alone catch it) or `runtime`";
        return e;
      }
      e.caught_by = name == "static" ? CaughtBy::static_checks : CaughtBy::runtime;
    }
  }
  if (e.task.empty()) e.problem = "the header comment lacks " + key("task: NAME");
  else if (!has_expectation) e.problem = "the header comment lacks " + key("expect: hacked CODE...") + " or `honest`";
  else if (e.hacked && e.codes.empty()) e.problem = key("expect: hacked") + " needs the check codes that must fail";
  else if (python && !e.backend) e.problem = "a Python candidate needs " + key("backend: cuda|triton|cpp|pytorch");
  else if (python && e.hacked && e.caught_by == CaughtBy::unstated)
    e.problem = "a hacked Python candidate needs " + key("caught-by: static|runtime");
  else if (!e.hacked && e.caught_by != CaughtBy::unstated)
    e.problem = "an honest candidate is caught by nothing: drop " + key("caught-by:");
  return e;
}

std::string read_source(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream source;
  source << in.rdbuf();
  return source.str();
}

}  // namespace drk::tools
