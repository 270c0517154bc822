// render_run_report(): the page `drk report` writes: one self-contained HTML document (CSS
// inline, charts as inline SVG, no script, nothing fetched) about one or more runs:
//   - what could not be read (each run's `missing`), at the top;
//   - a summary row per run;
//   - curves (section#curves): mean reward, best speedup, coverage, Fast@1.0 and Fast@1.2 per
//     step, one line per run, named by its label ("exp-trloo (trloo)");
//   - the best verified kernel per task (section#best-kernels): speedup, times, verdict, the
//     task's candidates, and the kernel's source;
//   - the hack attempts caught, by the Verifier's check (section#hacks), with an example each;
//   - the configuration each run resolved (section#configuration: its topology.yaml).
// Everything read from a run is escaped (html_escape): sources and feedback are model output.
//
// Thread-safety: a pure function. Errors: none; an empty part says that it is empty.
#pragma once

#include <string>
#include <vector>

#include "tools/observe/run_history.h"

namespace drk::observe {

std::string render_run_report(const std::vector<RunHistory>& runs);

}  // namespace drk::observe
