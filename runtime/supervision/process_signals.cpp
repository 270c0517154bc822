#include "runtime/supervision/process_signals.h"

#include <pthread.h>

#include <csignal>

namespace drk::runtime {

void block_process_signals_in_this_thread() {
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
}

}  // namespace drk::runtime
