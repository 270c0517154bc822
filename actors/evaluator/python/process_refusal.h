// Process refusal: a Python candidate's sandbox may start no process (the syscall filter kills it
// at fork or exec, SIGSYS, with no word of what was started). A CPython audit hook (PEP 578),
// which Python code cannot remove, refuses the attempt first with a PermissionError that names
// it, so that the candidate's error says what it tried: `subprocess.Popen(['ptxas', '--version'])`
// in the message of an honest Triton candidate whose kernel missed the warm-up's cache, or of a
// candidate that shells out. A process started below Python (a C extension's fork) still meets
// the filter. The Triton warm-up's sandbox, whose compilers start processes, does not refuse.
//
// Thread-safety: under the interpreter's lock (python_runtime.h); the hook runs in every thread.
// Errors: the hook raises PermissionError; installing cannot fail.
#pragma once

namespace drk::evaluator {

// Adds the audit hook once per process (later calls change only `refuse`): while `refuse` is set,
// subprocess.Popen, os.system, os.exec*, os.posix_spawn*, os.spawn*, os.fork and os.forkpty raise.
void install_process_refusal(bool refuse);

}  // namespace drk::evaluator
