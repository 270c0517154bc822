#include <Python.h>

#include "actors/evaluator/python/harness_access_watch.h"

#include <cstring>

namespace drk::evaluator {
namespace {

bool armed = false;
std::string seen;

// What `event` reaches, or nullptr when it is none of the watched accesses.
const char* access_of(const char* event, PyObject* args) {
  if (std::strcmp(event, "object.__getattr__") == 0) {
    PyObject* name = PyTuple_Check(args) && PyTuple_Size(args) >= 2 ? PyTuple_GetItem(args, 1) : nullptr;
    const char* text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
    return text && std::strcmp(text, "tb_frame") == 0 ? "a traceback's frame (tb_frame): the callers' frames" : nullptr;
  }
  if (std::strcmp(event, "sys._current_frames") == 0) return "sys._current_frames(): every thread's frame";
  if (std::strcmp(event, "gc.get_objects") == 0) return "gc.get_objects(): every live object";
  if (std::strcmp(event, "gc.get_referrers") == 0) return "gc.get_referrers(): the objects that hold a value";
  if (std::strcmp(event, "gc.get_referents") == 0) return "gc.get_referents(): the objects a value holds";
  return nullptr;
}

int audit(const char* event, PyObject* args, void*) {
  if (!armed || !seen.empty()) return 0;
  if (const char* access = access_of(event, args)) seen = access;
  return 0;
}

}  // namespace

void install_harness_access_watch() {
  static const bool installed = PySys_AddAuditHook(audit, nullptr) == 0;
  (void)installed;
}

HarnessAccessWatch::HarnessAccessWatch() {
  seen.clear();
  armed = true;
}

HarnessAccessWatch::~HarnessAccessWatch() { armed = false; }

const std::string& HarnessAccessWatch::first_access() const { return seen; }

}  // namespace drk::evaluator
