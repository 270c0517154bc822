// The signals a drkernel process handles on its main thread only (SIGINT, SIGTERM: stop;
// SIGCHLD: a child died). Every other thread the runtime starts blocks them first, so that the
// kernel delivers them to the main thread, which waits for them.
// Thread-safety: affects only the calling thread.
#pragma once

namespace drk::runtime {

void block_process_signals_in_this_thread();

}  // namespace drk::runtime
