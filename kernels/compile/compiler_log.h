// What a compiler printed, made fit to show and to cache: the paths of the files a build wrote in
// its scratch directory shown as their plain names (candidate.cpp, main.cpp, cuda.cu), and the
// text cut at a bound (a candidate can make a compiler print megabytes).
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace drk::compile {

// `output` with each `from` of `renames` replaced by its `to`, in order, and cut after max_bytes
// with a line that says so.
std::string compiler_log(std::string output, const std::vector<std::pair<std::string, std::string>>& renames,
                         size_t max_bytes);

}  // namespace drk::compile
