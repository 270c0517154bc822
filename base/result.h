// Result<T>: the value of an operation that can fail in an expected way.
//
// Expected failures (a bad input, a missing file, a candidate that does not compile, a peer
// that did not answer in time) are values, never exceptions. An Error carries a typed code
// that callers branch on and a message for people that names the input and the fix:
//   "task 'relux' is unknown: `drk tasks` lists the 12 tasks"
// Exceptions are reserved for faults (a broken invariant of our own).
//
// Thread-safety: plain values; no shared state.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace drk {

enum class Errc {
  invalid_argument,   // the caller's input is malformed or out of range
  not_found,          // a named thing (task, file, actor) does not exist
  parse_error,        // text (YAML, expression, message) that does not parse
  compile_error,      // a candidate that does not compile
  io_error,           // the operating system refused (open, write, spawn)
  timeout,            // a deadline passed
  busy,               // a bounded queue is full: try later
  peer_unavailable,   // the other side died or cannot be reached
  sandbox_crashed,    // the candidate's sandbox died (signal or exit)
  protocol_error,     // bytes from a peer that violate the protocol
  unsupported,        // valid request that this build or device cannot serve
  internal,           // should not happen; carries the detail for a bug report
};

std::string_view errc_name(Errc code);

struct Error {
  Errc code;
  std::string message;

  // "compile_error: candidate 'k.cpp' does not compile: ..."
  std::string describe() const;
};

inline Error make_error(Errc code, std::string message) { return Error{code, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success carries nothing.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(failed_); return error_; }

 private:
  Error error_{Errc::internal, {}};
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace drk
