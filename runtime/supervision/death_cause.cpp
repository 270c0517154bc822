#include "runtime/supervision/death_cause.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace drk::runtime {

std::string death_cause_path(const std::string& run_dir, const std::string& process) {
  return run_dir + "/causes/" + process + ".txt";
}

void write_death_cause(const std::string& run_dir, const std::string& process, const std::string& text) {
  std::error_code ignored;
  std::filesystem::create_directories(run_dir + "/causes", ignored);
  std::ofstream out(death_cause_path(run_dir, process), std::ios::trunc);
  out << text << "\n";
}

std::string take_death_cause(const std::string& run_dir, const std::string& process) {
  const std::string path = death_cause_path(run_dir, process);
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  std::string cause = text.str();
  while (!cause.empty() && (cause.back() == '\n' || cause.back() == '\r')) cause.pop_back();
  return cause;
}

}  // namespace drk::runtime
