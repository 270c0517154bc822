// GPU placement at the start of a run: `gpus: all` on an actor entry becomes the list of this
// machine's visible GPUs (visible_gpus.h), and a `gpus: [...]` list is checked against them, in
// the document itself, so that RUN_DIR/topology.yaml (and every process that reads it) holds
// the expansion: one instance per GPU, each pinned to it (topology_validation.cpp expands them).
//
// Only entries on the head node are resolved here: the GPUs of another node are not known to
// the head before it starts them (NodeJoin carries no GPU count), so `gpus: all` there is an
// error that says to list them, and lists there are not checked against that node's devices.
// Entries of an experiment whose device is not cuda are left to the schema's check, which
// refuses `gpus:` there.
//
// Thread-safety: a free function; `visible` is called at most once, and only when an entry on the
// head node says `gpus:`. Errors: invalid_argument, one line per entry, each naming the entry's
// file and line, what the machine shows and the fix.
#pragma once

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "runtime/topology/topology_locator.h"
#include "runtime/topology/visible_gpus.h"

namespace drk::runtime {

Status place_on_visible_gpus(YAML::Node document, const Locator& locator, const VisibleGpusQuery& visible);

}  // namespace drk::runtime
