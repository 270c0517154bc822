// Restart time: from `kill -9` of an actor's process to the restarted actor answering again.
//
// restart_times_ms() runs runtime::Supervisor itself (with the real ForkExecLauncher) over a
// topology of one child process, "echo", whose one actor (role bench_echo) answers every
// Heartbeat with its incarnation. The child is `EXECUTABLE host --run-dir DIR --process echo
// --incarnation N`: drk itself (whose main registers the role through register_bench_roles) or
// another program whose main calls register_echo_role() and runtime::run_host. A probe actor in
// this process, named "head" (the one name every topology routes), sends the echo a Heartbeat every millisecond. Each sample:
// SIGKILL to the echo's process, then the time until the first answer from a new incarnation,
// which includes the supervisor noticing the death, the fork and exec, the child loading its
// topology and binding its mailbox, and the probe's ZeroMQ socket reconnecting. The resolution
// is the probe's 1 ms period. Supervision backoff is off, so that every kill is restarted at
// once, as the first restart is under the default policy. With `warm_spare` (the default of
// supervision.warm_spare) the supervisor keeps a spare loaded ahead (runtime/supervision/warm_spare.h), and
// each kill leaves time for the next spare to load before the following kill (a restart waits for
// a spare still loading otherwise); without it every restart is a cold fork + exec.
//
// Errors: timeout when the echo does not answer within 10 s; the supervisor's errors.
// Thread-safety: call from the main thread, with no other children of this process running.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace drk::bench {

// The role of the actor the restart measurement's child process hosts (bench_echo); call before
// runtime::run_host.
void register_echo_role();

Result<std::vector<double>> restart_times_ms(const std::string& executable, int samples, bool warm_spare);

}  // namespace drk::bench
