#include "runtime/progress_observer.h"

namespace drk::runtime {
namespace {

ProgressObserverFactory& registered() {
  static ProgressObserverFactory factory;
  return factory;
}

}  // namespace

void register_progress_observer(ProgressObserverFactory factory) { registered() = std::move(factory); }

std::unique_ptr<ProgressObserver> make_progress_observer(const Topology& topology) {
  return registered() ? registered()(topology) : nullptr;
}

}  // namespace drk::runtime
