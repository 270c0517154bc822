// Slurm's hostlist syntax (SLURM_JOB_NODELIST, `scontrol show hostnames`) expanded to the host
// names it stands for, in Slurm's order.
//
//   "gpu[01-03,07],cpu1"   -> gpu01 gpu02 gpu03 gpu07 cpu1
//   "rack[1-2]-n[1-2]"     -> rack1-n1 rack1-n2 rack2-n1 rack2-n2 (the first bracket slowest)
//
// Commas inside brackets separate ranges, outside them hosts; a range keeps the zero padding of
// its lower bound ("01-10" gives 01 ... 10). Thread-safety: a free function.
// Errors: invalid_argument naming the list and what is wrong with it (an unclosed bracket, a
// range whose bounds are not numbers or run backwards, an empty name), or a list of more than
// kMaxHostlistHosts hosts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::runtime {

inline constexpr std::size_t kMaxHostlistHosts = 1u << 16;

Result<std::vector<std::string>> expand_hostlist(std::string_view hostlist);

}  // namespace drk::runtime
