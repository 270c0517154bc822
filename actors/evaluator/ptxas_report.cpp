#include "actors/evaluator/ptxas_report.h"

#include <cstdlib>
#include <map>

namespace drk::evaluator {
namespace {

// The number right before `unit` in `line` ("32 registers" -> 32), 0 when absent.
uint32_t number_before(std::string_view line, std::string_view unit) {
  size_t at = line.find(unit);
  if (at == std::string_view::npos || at == 0) return 0;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == end) return 0;
  return static_cast<uint32_t>(std::strtoul(std::string(line.substr(begin, end - begin)).c_str(), nullptr, 10));
}

// The text between the first pair of single quotes after `prefix`.
std::string_view quoted_after(std::string_view line, std::string_view prefix, size_t from = 0) {
  size_t at = line.find(prefix, from);
  if (at == std::string_view::npos) return {};
  size_t open = line.find('\'', at + prefix.size());
  if (open == std::string_view::npos) return {};
  size_t close = line.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

}  // namespace

std::vector<KernelResourceUsage> parse_ptxas_report(std::string_view output) {
  std::vector<KernelResourceUsage> kernels;
  std::map<std::string, size_t, std::less<>> index;
  KernelResourceUsage* current = nullptr;   // the entry whose "Used ..." line comes next
  KernelResourceUsage* properties = nullptr;  // the entry whose "stack frame" line comes next
  auto entry = [&](std::string_view name) -> KernelResourceUsage* {
    auto found = index.find(name);
    if (found != index.end()) return &kernels[found->second];
    index.emplace(std::string(name), kernels.size());
    KernelResourceUsage usage;
    usage.name = std::string(name);
    kernels.push_back(std::move(usage));
    return &kernels.back();
  };
  while (!output.empty()) {
    size_t newline = output.find('\n');
    std::string_view line = output.substr(0, newline);
    output = newline == std::string_view::npos ? std::string_view{} : output.substr(newline + 1);
    if (line.find("Compiling entry function") != std::string_view::npos) {
      std::string_view name = quoted_after(line, "Compiling entry function");
      if (name.empty()) continue;
      current = entry(name);
      std::string_view architecture = quoted_after(line, " for ");
      if (!architecture.empty()) current->architecture = std::string(architecture);
      properties = nullptr;
    } else if (size_t at = line.find("Function properties for "); at != std::string_view::npos) {
      std::string_view name = line.substr(at + std::string_view("Function properties for ").size());
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.remove_suffix(1);
      // Properties of device functions (not entries) are printed too: keep entries only.
      auto found = index.find(name);
      properties = found == index.end() ? nullptr : &kernels[found->second];
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      if (!properties) continue;
      properties->stack_frame_bytes = number_before(line, "bytes stack frame");
      properties->spill_store_bytes = number_before(line, "bytes spill stores");
      properties->spill_load_bytes = number_before(line, "bytes spill loads");
      properties = nullptr;
    } else if (line.find("Used ") != std::string_view::npos && line.find(" registers") != std::string_view::npos) {
      if (!current) continue;
      current->registers = number_before(line, "registers");
      current->barriers = number_before(line, "barriers");
      current->shared_bytes = number_before(line, "bytes smem");
      current->constant_bytes = number_before(line, "bytes cmem[0]");
      current = nullptr;
    }
  }
  return kernels;
}

}  // namespace drk::evaluator
