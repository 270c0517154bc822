// Rejection sampling of a step's turns before the policy update (Dr. Kernel's PRS and MRS;
// docs/topology.md, `prs.` and `mrs.`). A rejected turn is masked out of the loss; it keeps its
// reward in the advantage baseline and stays in the archive.
//
// PRS (profiling-based): a correct turn is kept with probability
//   clip((coverage - coverage_min) / ramp, 0, 1)          (ramp 0: a hard threshold)
// so a kernel that leaves most of the time to library calls teaches nothing; incorrect turns are
// always kept (they carry the negative signal), and so are screened ones, which have no profile
// (the Learner passes them as not correct).
//
// MRS (mismatch): per trajectory, with r_k = p_learner(d_k) / p_behaviour(d_k) over every
// decision d_k of its turns, the trajectory is rejected when the geometric mean exp(mean log r_k)
// lies outside [band_low, band_high] ("band"), or when any single r_k < veto ("veto").
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace drk::learner {

struct PrsSettings {
  bool enabled = true;
  double coverage_min = 0.3;
  double ramp = 0.1;
};

struct MrsSettings {
  bool enabled = true;
  double band_low = 0.999;
  double band_high = 1.001;
  double veto = 1e-4;
};

// The probability that PRS keeps a turn.
double prs_keep_probability(const PrsSettings& settings, bool correct, double coverage);

// Whether PRS keeps the turn, given a uniform draw in [0, 1) that is the turn's own
// (prs_uniform_draw) so that the choice is reproducible.
bool prs_keeps(const PrsSettings& settings, bool correct, double coverage, double uniform_draw);

// A draw in [0, 1) from the seed and the turn's candidate id (FNV-1a, then splitmix64).
double prs_uniform_draw(uint64_t seed, std::string_view candidate_id);

enum class MrsOutcome { kept, outside_band, vetoed };

// log_ratios: log p_learner - log p_behaviour for every decision of one trajectory. An empty
// list is kept (nothing to compare). The veto is checked first.
MrsOutcome mrs_check(const MrsSettings& settings, const std::vector<double>& log_ratios);

}  // namespace drk::learner
