// CURVE keys of the links between nodes: key pairs, the key directory that holds them, and the
// set-up of a ZeroMQ socket as a CURVE server or client (docs/security.md).
//
// A key directory holds, per identity NAME (the head is `head`, a node is its node name):
//   NAME.key  the public and the secret key of NAME; mode 0600, only on NAME's own machine
//   NAME.pub  the public key of NAME; every machine has the .pub of every identity
// Every NAME.pub of the directory is an identity allowed to connect. Both files are small text:
//   # comment lines (what the file is, who may see it)
//   public-key = "<40 characters of Z85>"
//   secret-key = "<40 characters of Z85>"      (NAME.key only)
//
// Thread-safety: free functions without shared state; the socket functions must be called by
// the thread that uses the socket (ZeroMQ sockets are not thread-safe).
// Ownership: values are plain copies; nothing here keeps a file open. Key files are read on the
// descriptor whose mode is checked (fstat), not through the file-system seam.
// Errors: expected failures (missing or malformed files, a secret key readable by others, an
// existing identity) are Result errors whose message names the file and the fix. A malformed
// key handed to make_curve_server / make_curve_client is a fault of the caller (keys come from
// the read functions, which validate them): zmq::error_t.
#pragma once

#include <zmq.hpp>

#include <map>
#include <string>
#include <string_view>

#include "base/file_system.h"
#include "base/result.h"

namespace drk::runtime {

// Z85 text, 40 characters each (32 bytes of key).
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};

// What a process needs to secure its links: its own pair and the public keys of the identities
// allowed to connect to it (name -> Z85 public key).
struct CurveIdentity {
  CurveKeyPair own;
  std::map<std::string, std::string> allowed;
};

// The ZAP domain of drkernel's CURVE server sockets.
inline constexpr const char* kCurveZapDomain = "drk";

// A fresh pair from libzmq's generator. unsupported when libzmq was built without CURVE.
Result<CurveKeyPair> generate_curve_key_pair();

// True when `key` is 40 characters of Z85 (32 bytes).
bool is_z85_key(std::string_view key);

// An identity name is usable as a file name and a node name: letters, digits, '.', '_', '-',
// not starting with '.' or '-'. invalid_argument otherwise.
Status check_identity_name(std::string_view name);

// Writes DIR/NAME.key (mode 0600) and DIR/NAME.pub (mode 0644), each less the umask, creating
// DIR (mode 0700) when it does not exist, through `files` (base/file_system.h). Both are written
// and flushed before either is put in its place, and each appears whole or not at all: a failure
// (io_error naming the file) leaves the pair that was there, or none. Without `overwrite`, an
// existing NAME.key or NAME.pub is left alone and the call fails with invalid_argument.
Status write_key_pair(const std::string& dir, const std::string& name, const CurveKeyPair& pair,
                      bool overwrite = false, FileSystem& files = real_file_system());

// Reads DIR/NAME.key. not_found when it is missing; invalid_argument when group or others may
// read it (as ssh refuses an unprotected private key); parse_error (file:line) when malformed
// or when its public key is not the one of its secret key.
Result<CurveKeyPair> read_key_pair(const std::string& dir, const std::string& name);

// Reads DIR/NAME.pub. not_found when it is missing; parse_error (file:line) when malformed or
// when it holds a secret key.
Result<std::string> read_public_key(const std::string& dir, const std::string& name);

// The public key of every NAME.pub in DIR, by NAME: the identities allowed to connect. An empty
// directory gives an empty map. not_found when DIR does not exist; parse_error (file:line) for a
// malformed file.
Result<std::map<std::string, std::string>> read_allowed_keys(const std::string& dir);

// NAME's own pair and every allowed key of DIR. parse_error when DIR/NAME.pub exists and is not
// the public half of DIR/NAME.key (a stale .pub).
Result<CurveIdentity> load_curve_identity(const std::string& dir, const std::string& name);

// Before bind: the socket authenticates its peers with CURVE (curve_server, own secret key, ZAP
// domain kCurveZapDomain). Only peers that the context's ZapAuthenticator allows get through;
// while the context has none, no peer gets in (libzmq's ZAP_ENFORCE_DOMAIN, a draft
// option that Debian's libzmq 4.3.4 has; a libzmq without it admits every CURVE peer then).
void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& own);

// Before connect: the socket talks CURVE to the server whose public key is given, and refuses
// a server that does not hold the matching secret key.
void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& own,
                       const std::string& server_public_key);

// True for endpoints that never leave this machine: inproc://, ipc://, and tcp:// to 127.x.x.x,
// localhost or [::1]. Everything else (other addresses, `*`, other transports) is false.
bool is_loopback_endpoint(std::string_view endpoint);

}  // namespace drk::runtime
