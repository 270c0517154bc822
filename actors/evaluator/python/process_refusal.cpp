#include "actors/evaluator/python/process_refusal.h"

#include <Python.h>

#include <cstring>
#include <string>

namespace drk::evaluator {
namespace {

bool refusing = false;

// The event's command, as Python shows it: Popen's and exec's argument list, system's command.
std::string command_of(const char* event, PyObject* args) {
  if (!PyTuple_Check(args) || PyTuple_Size(args) == 0) return "";
  const bool argv_second = std::strcmp(event, "subprocess.Popen") == 0 || std::strcmp(event, "os.exec") == 0 ||
                           std::strcmp(event, "os.posix_spawn") == 0 || std::strcmp(event, "os.spawn") == 0;
  PyObject* shown = PyTuple_GetItem(args, argv_second && PyTuple_Size(args) > 1 ? 1 : 0);
  PyObject* text = shown ? PyObject_Repr(shown) : nullptr;
  std::string command = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : "";
  Py_XDECREF(text);
  PyErr_Clear();
  return command.size() > 300 ? command.substr(0, 300) + "..." : command;
}

int audit(const char* event, PyObject* args, void*) {
  if (!refusing) return 0;
  for (const char* refused : {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                              "os.forkpty"}) {
    if (std::strcmp(event, refused) != 0) continue;
    const std::string message = std::string("the sandbox starts no process: ") + event + "(" +
                                command_of(event, args) + ") refused";
    PyErr_SetString(PyExc_PermissionError, message.c_str());
    return -1;
  }
  return 0;
}

}  // namespace

void install_process_refusal(bool refuse) {
  static const bool installed = PySys_AddAuditHook(audit, nullptr) == 0;
  (void)installed;
  refusing = refuse;
}

}  // namespace drk::evaluator
