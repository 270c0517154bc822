#include "kernels/catalog/shape_range.h"

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <sstream>

namespace drk::kernels {

ShapeMap ShapeRange::at(const std::map<std::string, int64_t>& values) const {
  ShapeMap shapes;
  for (const auto& [tensor, refs] : tensors) {
    Shape& shape = shapes[tensor];
    for (const DimRef& ref : refs) shape.push_back(ref.name.empty() ? ref.value : values.at(ref.name));
  }
  return shapes;
}

ShapeMap ShapeRange::smallest() const {
  std::map<std::string, int64_t> values;
  for (const auto& [name, dim] : dims) values[name] = dim.smallest();
  return at(values);
}

ShapeMap ShapeRange::largest() const {
  std::map<std::string, int64_t> values;
  for (const auto& [name, dim] : dims) values[name] = dim.largest();
  return at(values);
}

uint64_t ShapeRange::size() const {
  uint64_t total = 1;
  for (const auto& [name, dim] : dims) {
    if (total > std::numeric_limits<uint64_t>::max() / dim.count()) return std::numeric_limits<uint64_t>::max();
    total *= dim.count();
  }
  return total;
}

std::vector<ShapeMap> ShapeRange::draw(uint64_t seed) const {
  std::mt19937_64 rng(seed);
  const uint64_t wanted = std::min<uint64_t>(draws, size());
  std::set<std::map<std::string, int64_t>> seen;
  std::vector<ShapeMap> drawn;
  // Rejection keeps the draws distinct; a small range (fewer shapes than draws) is tried whole.
  for (uint64_t attempts = 0; drawn.size() < wanted && attempts < 64 * wanted; ++attempts) {
    std::map<std::string, int64_t> values;
    for (const auto& [name, dim] : dims)
      values[name] = dim.at(std::uniform_int_distribution<size_t>(0, dim.count() - 1)(rng));
    if (seen.insert(values).second) drawn.push_back(at(values));
  }
  return drawn;
}

std::string ShapeRange::describe() const {
  std::ostringstream out;
  const char* separator = "";
  for (const auto& [name, dim] : dims) {
    out << separator << name;
    if (dim.list.empty()) {
      out << " " << dim.from << ".." << dim.to << " by " << dim.step;
    } else {
      out << " in {";
      for (size_t i = 0; i < dim.list.size(); ++i) out << (i ? ", " : "") << dim.list[i];
      out << "}";
    }
    separator = ", ";
  }
  separator = "; ";
  for (const auto& [tensor, refs] : tensors) {
    out << separator << tensor << " [";
    for (size_t i = 0; i < refs.size(); ++i) {
      out << (i ? ", " : "");
      if (refs[i].name.empty()) out << refs[i].value;
      else out << refs[i].name;
    }
    out << "]";
    separator = ", ";
  }
  out << "; " << std::min<uint64_t>(draws, size()) << " drawn of " << size();
  separator = "; timed at ";
  for (const auto& values : timed) {
    out << separator;
    const char* between = "";
    for (const auto& [name, value] : values) {
      out << between << name << "=" << value;
      between = " ";
    }
    separator = ", ";
  }
  return out.str();
}

}  // namespace drk::kernels
