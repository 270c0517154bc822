#include "runtime/nodes/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "base/staged_file.h"
#include "base/unique_fd.h"

namespace drk::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kZ85KeyLength = 40;

std::string os_error(int error) { return std::error_code(error, std::generic_category()).message(); }

std::string key_file(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / (name + ".key")).string();
}
std::string pub_file(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / (name + ".pub")).string();
}
std::string generate_hint(const std::string& dir, const std::string& name) {
  return "run `drk keys generate " + dir + " " + name + "`";
}

struct KeyFileText {
  std::optional<std::string> public_key;
  std::optional<std::string> secret_key;
  int public_line = 0;
};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// `public-key = "..."` and `secret-key = "..."` lines; blank lines and # comments are skipped.
Result<KeyFileText> parse_key_text(const std::string& path, std::string_view text) {
  KeyFileText parsed;
  int line_number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    const auto equals = line.find('=');
    if (equals == std::string_view::npos)
      return make_error(Errc::parse_error, where + "expected `public-key = \"...\"` or `secret-key = \"...\"`, got '" +
                                               std::string(line) + "'");
    const std::string_view field = trim(line.substr(0, equals));
    std::string_view value = trim(line.substr(equals + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    std::optional<std::string>* slot = nullptr;
    if (field == "public-key") slot = &parsed.public_key;
    else if (field == "secret-key") slot = &parsed.secret_key;
    else
      return make_error(Errc::parse_error,
                        where + "unknown field '" + std::string(field) + "' (expected public-key or secret-key)");
    if (*slot) return make_error(Errc::parse_error, where + std::string(field) + " appears twice");
    if (!is_z85_key(value))
      return make_error(Errc::parse_error, where + std::string(field) + " is not a key: expected " +
                                               std::to_string(kZ85KeyLength) + " characters of Z85, got " +
                                               std::to_string(value.size()) + " characters");
    *slot = std::string(value);
    if (slot == &parsed.public_key) parsed.public_line = line_number;
  }
  return parsed;
}

// The whole file. A secret one (`regenerate` set: how to make a new pair) that group or others
// may read is refused.
Result<std::string> read_key_text(const std::string& path, const std::string& missing_fix,
                                  const std::string& regenerate = {}) {
  const bool secret = !regenerate.empty();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const int error = errno;
    if (error == ENOENT) return make_error(Errc::not_found, "key file '" + path + "' does not exist: " + missing_fix);
    return make_error(Errc::io_error, "cannot open key file '" + path + "': " + os_error(error));
  }
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0)
    return make_error(Errc::io_error, "cannot stat key file '" + path + "': " + os_error(errno));
  if (!S_ISREG(status.st_mode)) return make_error(Errc::invalid_argument, "key file '" + path + "' is not a regular file");
  if (secret && (status.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(status.st_mode & 07777));
    return make_error(Errc::invalid_argument,
                      "key file '" + path + "' holds a secret key but has mode " + mode +
                          ": group or others may read it, so it is refused. If nobody else could have read it, "
                          "run `chmod 600 " + path + "`; otherwise " + regenerate + " and distribute the new .pub");
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return make_error(Errc::io_error, "cannot read key file '" + path + "': " + os_error(errno));
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > 64 * 1024) return make_error(Errc::parse_error, "key file '" + path + "' is too large to be a key file");
  }
  return text;
}

// A key file that appeared since write_key_pair looked is named with the fix.
Status install(StagedFile& staged, bool overwrite) {
  Status installed = staged.install(overwrite ? StagedFile::Install::replace : StagedFile::Install::only_new);
  if (installed || installed.error().code != Errc::invalid_argument) return installed;
  return make_error(Errc::invalid_argument, "'" + staged.path() + "' already exists: pass --force to replace it");
}

std::string key_file_text(const std::string& name, const CurveKeyPair& pair) {
  return "# drkernel CURVE key pair of identity '" + name + "': public and SECRET key.\n"
         "# Keep this file on the machine of '" + name + "' only, with mode 0600; never copy it.\n"
         "# Its public half is " + name + ".pub: every other machine gets a copy of that one.\n"
         "# Written by `drk keys generate` (docs/security.md).\n"
         "public-key = \"" + pair.public_key + "\"\n"
         "secret-key = \"" + pair.secret_key + "\"\n";
}

std::string pub_file_text(const std::string& name, const CurveKeyPair& pair) {
  return "# drkernel CURVE public key of identity '" + name + "'.\n"
         "# Copy it into the key directory of every machine of the run: it lets '" + name + "' connect.\n"
         "# Written by `drk keys generate` (docs/security.md).\n"
         "public-key = \"" + pair.public_key + "\"\n";
}

// The public key of `secret_key`; empty when libzmq cannot derive it.
std::string public_of(const std::string& secret_key) {
  char derived[kZ85KeyLength + 1] = {};
  if (zmq_curve_public(derived, secret_key.c_str()) != 0) return {};
  return derived;
}

}  // namespace

Result<CurveKeyPair> generate_curve_key_pair() {
  if (!zmq_has("curve"))
    return make_error(Errc::unsupported, "this libzmq was built without CURVE: install a libzmq with libsodium");
  char public_key[kZ85KeyLength + 1] = {};
  char secret_key[kZ85KeyLength + 1] = {};
  if (zmq_curve_keypair(public_key, secret_key) != 0)
    return make_error(Errc::internal, std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
  return CurveKeyPair{public_key, secret_key};
}

bool is_z85_key(std::string_view key) {
  if (key.size() != kZ85KeyLength) return false;
  const std::string text(key);
  uint8_t decoded[32];
  return zmq_z85_decode(decoded, text.c_str()) != nullptr;
}

Status check_identity_name(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  };
  const bool valid = !name.empty() && name.front() != '.' && name.front() != '-' &&
                     std::all_of(name.begin(), name.end(), allowed);
  if (!valid)
    return make_error(Errc::invalid_argument,
                      "identity name '" + std::string(name) +
                          "' is not usable: use letters, digits, '.', '_' and '-', not starting with '.' or '-' "
                          "(the head is `head`, a node is its node name)");
  return {};
}

Status write_key_pair(const std::string& dir, const std::string& name, const CurveKeyPair& pair, bool overwrite,
                      FileSystem& files) {
  if (auto valid = check_identity_name(name); !valid) return valid;
  if (!is_z85_key(pair.public_key) || !is_z85_key(pair.secret_key) || public_of(pair.secret_key) != pair.public_key)
    return make_error(Errc::invalid_argument, "the key pair for '" + name + "' is not a CURVE key pair (40 characters of Z85 each, public from secret)");
  fs::path directory = fs::path(dir).lexically_normal();
  if (!directory.has_filename()) directory = directory.parent_path();  // "keys/"
  if (directory.has_parent_path())
    if (auto created = files.create_directories(directory.parent_path().string()); !created) return created;
  if (auto created = files.create_directory(directory.string(), 0700); !created) return created;
  const std::string key_path = key_file(dir, name);
  const std::string pub_path = pub_file(dir, name);
  if (!overwrite) {
    if (files.exists(key_path))
      return make_error(Errc::invalid_argument, "'" + key_path + "' already exists: identity '" + name +
                                                    "' has a key pair; pass --force to replace it (then distribute the new " +
                                                    name + ".pub)");
    if (files.exists(pub_path))
      return make_error(Errc::invalid_argument, "'" + pub_path + "' already exists: it may be the public key of '" + name +
                                                    "' copied from its machine; generate the pair on that machine, or pass --force to replace it");
  }
  // Both written in full before either is in place; the .pub goes first, so that a failure
  // between the two keeps the secret key that was there (a .pub can be copied again, a secret
  // key cannot).
  auto key = StagedFile::write(files, key_path, key_file_text(name, pair), 0600);
  if (!key) return key.error();
  auto pub = StagedFile::write(files, pub_path, pub_file_text(name, pair), 0644);
  if (!pub) return pub.error();
  if (auto installed = install(*pub, overwrite); !installed) return installed;
  if (auto installed = install(*key, overwrite); !installed) {
    // Without its .key the new .pub is of no use, and a later generate would find it.
    if (!overwrite) (void)files.remove(pub_path);
    return installed;
  }
  return files.sync_directory(dir);
}

Result<CurveKeyPair> read_key_pair(const std::string& dir, const std::string& name) {
  if (auto valid = check_identity_name(name); !valid) return valid.error();
  const std::string path = key_file(dir, name);
  auto text = read_key_text(path, generate_hint(dir, name) + " on this machine",
                            "generate a new pair with `drk keys generate " + dir + " " + name + " --force`");
  if (!text) return text.error();
  auto parsed = parse_key_text(path, *text);
  if (!parsed) return parsed.error();
  const std::string fix = "; regenerate it with `drk keys generate " + dir + " " + name + " --force`";
  if (!parsed->public_key) return make_error(Errc::parse_error, path + ": no public-key line" + fix);
  if (!parsed->secret_key) return make_error(Errc::parse_error, path + ": no secret-key line" + fix);
  if (public_of(*parsed->secret_key) != *parsed->public_key)
    return make_error(Errc::parse_error, path + ":" + std::to_string(parsed->public_line) +
                                             ": public-key is not the public half of secret-key" + fix);
  return CurveKeyPair{*parsed->public_key, *parsed->secret_key};
}

Result<std::string> read_public_key(const std::string& dir, const std::string& name) {
  if (auto valid = check_identity_name(name); !valid) return valid.error();
  const std::string path = pub_file(dir, name);
  auto text = read_key_text(path, "copy " + name + ".pub from the machine of '" + name + "', or " + generate_hint(dir, name) + " there");
  if (!text) return text.error();
  auto parsed = parse_key_text(path, *text);
  if (!parsed) return parsed.error();
  if (parsed->secret_key)
    return make_error(Errc::parse_error, path + ": a .pub file holds a secret key: it may have leaked; run `drk keys generate " +
                                             dir + " " + name + " --force` on the machine of '" + name +
                                             "' and distribute the new .pub");
  if (!parsed->public_key)
    return make_error(Errc::parse_error, path + ": no public-key line; copy " + name + ".pub again from the machine of '" + name + "'");
  return *parsed->public_key;
}

Result<std::map<std::string, std::string>> read_allowed_keys(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    return make_error(Errc::not_found, "key directory '" + dir + "' does not exist: create it with `drk keys generate " + dir +
                                           " NAME` and copy every identity's .pub into it");
  std::map<std::string, std::string> allowed;
  for (fs::directory_iterator entry(dir, error), end; !error && entry != end; entry.increment(error)) {
    const fs::path& path = entry->path();
    if (path.extension() != ".pub" || path.filename().string().front() == '.') continue;
    const std::string name = path.stem().string();
    if (auto valid = check_identity_name(name); !valid)
      return make_error(Errc::invalid_argument, path.string() + ": " + valid.error().message + "; rename or remove the file");
    auto key = read_public_key(dir, name);
    if (!key) return key.error();
    allowed.emplace(name, std::move(*key));
  }
  if (error) return make_error(Errc::io_error, "cannot list key directory '" + dir + "': " + error.message());
  return allowed;
}

Result<CurveIdentity> load_curve_identity(const std::string& dir, const std::string& name) {
  auto own = read_key_pair(dir, name);
  if (!own) return own.error();
  auto allowed = read_allowed_keys(dir);
  if (!allowed) return allowed.error();
  if (auto listed = allowed->find(name); listed != allowed->end() && listed->second != own->public_key)
    return make_error(Errc::parse_error, pub_file(dir, name) + ": not the public key of " + key_file(dir, name) +
                                             " (a stale copy?); regenerate the .pub with `drk keys generate " + dir + " " +
                                             name + " --force` or remove it");
  return CurveIdentity{std::move(*own), std::move(*allowed)};
}

void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& own) {
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
  socket.set(zmq::sockopt::zap_domain, kCurveZapDomain);
  // Fail closed: without a ZAP handler in the context, libzmq would admit every CURVE client.
  // The option is a draft of libzmq 4.3; a libzmq built without drafts refuses it, and then the
  // ZapAuthenticator must outlive the socket (zap_authenticator.h).
  constexpr int kZapEnforceDomain = 93;  // ZMQ_ZAP_ENFORCE_DOMAIN
  const int enforce = 1;
  zmq_setsockopt(socket.handle(), kZapEnforceDomain, &enforce, sizeof enforce);
}

void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& own, const std::string& server_public_key) {
  socket.set(zmq::sockopt::curve_serverkey, server_public_key);
  socket.set(zmq::sockopt::curve_publickey, own.public_key);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
}

bool is_loopback_endpoint(std::string_view endpoint) {
  if (endpoint.starts_with("inproc://") || endpoint.starts_with("ipc://")) return true;
  if (!endpoint.starts_with("tcp://")) return false;
  std::string_view address = endpoint.substr(6);
  // tcp://SOURCE;DESTINATION:PORT connects from SOURCE: only the destination matters.
  if (const auto separator = address.rfind(';'); separator != std::string_view::npos) address = address.substr(separator + 1);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view host = address.substr(0, colon);
  if (host == "localhost" || host == "[::1]") return true;
  // 127.a.b.c: four decimal parts of at most three digits, the first 127.
  if (!host.starts_with("127.")) return false;
  int parts = 0;
  std::size_t digits = 0;
  for (char c : host) {
    if (c == '.') {
      if (digits == 0) return false;
      ++parts;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < 3) {
      ++digits;
    } else {
      return false;
    }
  }
  return parts == 3 && digits > 0;
}

}  // namespace drk::runtime
