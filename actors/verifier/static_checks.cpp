#include "actors/verifier/static_checks.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

#include "base/cxx_source.h"

namespace drk::verifier {
namespace {

// What a rule matches: a call (the name followed by '(', not a member call, not qualified by a
// namespace other than std), a token anywhere outside comments and literals, or a pattern inside
// string literals.
enum class Kind { call, token, literal };

struct Rule {
  const char* code;
  Severity severity;
  Kind kind;
  const char* pattern;  // ECMAScript; group 1 is the name reported
  // Calls only: the call is allowed when this token is among its arguments (reported otherwise
  // as "<name> without <token>").
  const char* allowed_with_argument = nullptr;
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> all = {
      {"static.process", Severity::failure, Kind::call,
       R"(\b(fork|vfork|execl|execlp|execle|execv|execvp|execvpe|execve|fexecve|system|popen|posix_spawnp?|clone|clone3|ptrace|prctl|setrlimit|prlimit|daemon)\s*\()"},
      {"static.thread", Severity::warning, Kind::token, R"(\b(std\s*::\s*(?:thread|jthread|async))\b)"},
      {"static.thread", Severity::warning, Kind::call, R"(\b(pthread_create|thrd_create)\s*\()"},
      {"static.thread", Severity::warning, Kind::token, R"((#\s*pragma\s+omp)\b)"},
      {"static.timer", Severity::failure, Kind::call,
       R"(\b(clock_gettime|gettimeofday|clock|time|times|timespec_get|__rdtsc|__rdtscp|__builtin_ia32_rdtsc|__builtin_ia32_rdtscp|__builtin_readcyclecounter|clock64|globaltimer)\s*\()"},
      {"static.timer", Severity::failure, Kind::token, R"(\b((?:std\s*::\s*)?chrono)\s*::)"},
      // Events that cannot time (cudaEventDisableTiming) join streams: recording them and making a
      // stream wait on them is allowed; reading, querying or waiting on the host is a timer.
      {"static.timer", Severity::failure, Kind::token,
       R"(\b(cudaEvent(?!(?:_t|Record|RecordWithFlags|Destroy|CreateWithFlags|DisableTiming)\b)\w*)\b)"},
      {"static.timer", Severity::failure, Kind::call, R"(\b(cudaEventCreateWithFlags)\s*\()", "cudaEventDisableTiming"},
      {"static.dynamic_loading", Severity::failure, Kind::call,
       R"(\b(dlopen|dlmopen|dlsym|dlvsym|dladdr|dladdr1|dlinfo|dl_iterate_phdr)\s*\()"},
      // The loader's own list of loaded objects: a way to the harness's symbols without dlsym.
      {"static.dynamic_loading", Severity::failure, Kind::token, R"(\b(_r_debug|r_debug|link_map|_DYNAMIC)\b)"},
      {"static.signal", Severity::failure, Kind::call,
       R"(\b(signal|sigaction|sigprocmask|pthread_sigmask|setitimer|timer_create|alarm|kill|tgkill|raise|pthread_kill)\s*\()"},
      {"static.file", Severity::failure, Kind::call,
       R"(\b(fopen|fopen64|freopen|fdopen|open|open64|openat|creat|mkfifo|unlink|opendir)\s*\()"},
      {"static.file", Severity::failure, Kind::token, R"(\b(std\s*::\s*(?:i|o)?fstream|std\s*::\s*filesystem)\b)"},
      {"static.network", Severity::failure, Kind::call,
       R"(\b(socket|socketpair|connect|accept|accept4|listen|getaddrinfo|gethostbyname|sendto|recvfrom|sendmsg|recvmsg)\s*\()"},
      {"static.environment", Severity::failure, Kind::call,
       R"(\b(getenv|secure_getenv|setenv|putenv|unsetenv|getrandom|getentropy|getauxval)\s*\()"},
      {"static.environment", Severity::failure, Kind::token, R"(\b(environ|__environ|std\s*::\s*random_device)\b)"},
      {"static.environment", Severity::failure, Kind::literal, R"((/proc\b|/dev/u?random|/sys/))"},
      {"static.syscall", Severity::failure, Kind::call, R"(\b(syscall)\s*\()"},
      {"static.inline_asm", Severity::failure, Kind::token, R"(\b(asm|__asm__|__asm)\b)"},
      {"static.stream", Severity::failure, Kind::token,
       R"(\b(cudaStreamSetAttribute|cudaGraphLaunch|cudaLaunchHostFunc|cudaStreamAddCallback)\b)"},
      {"static.side_stream", Severity::warning, Kind::token, R"(\b(cudaStreamCreate\w*|cudaStreamPerThread)\b)"},
      {"static.device_setting", Severity::failure, Kind::token,
       R"(\b(cudaSetDevice\w*|cudaDeviceSetLimit|cudaDeviceSetCacheConfig|cudaDeviceSetSharedMemConfig|cudaCtxResetPersistingL2Cache|cudaDeviceReset|cudaThreadSetLimit|cuCtx\w+)\b)"},
      {"static.library_handle", Severity::failure, Kind::token,
       R"(\b(cublas\w*Create\w*|cublasSetStream\w*|cublasSetMathMode|cudnnCreate\w*|cudnnSetStream|cusparseCreate\w*|cufftPlan\w*)\b)"},
      {"static.channel", Severity::failure, Kind::call,
       R"(\b(write|writev|pwrite|pwrite64|pwritev|pwritev2|read|readv|pread|pread64|preadv|preadv2|dup|dup2|dup3|pipe|pipe2|close|close_range|fcntl|ioctl|lseek|mmap|mmap64|mremap|munmap|mprotect|sendfile|splice|tee|vmsplice|memfd_create|process_vm_readv|process_vm_writev)\s*\()"},
      {"static.channel", Severity::failure, Kind::token, R"((?:->|\.)\s*(harness)\b)"},
      {"static.global_constructor", Severity::failure, Kind::token,
       R"(__attribute__\s*\(\s*\(\s*((?:__)?(?:constructor|destructor)(?:__)?)\b)"},
      {"static.global_constructor", Severity::failure, Kind::token, R"(\[\[\s*(gnu\s*::\s*(?:constructor|destructor))\b)"},
      {"static.global_constructor", Severity::failure, Kind::literal, R"((\.init_array|\.fini_array|\.ctors))"},
  };
  return all;
}

const std::vector<std::regex>& compiled_rules() {
  static const std::vector<std::regex> compiled = [] {
    std::vector<std::regex> out;
    for (const auto& rule : rules()) out.emplace_back(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
    return out;
  }();
  return compiled;
}

// True when the call at `at` is a member call (x.open(, p->open() or qualified by a namespace or
// class other than std (mine::open(): the rule is about the C library and std.
bool foreign_call(const std::string& text, size_t at) {
  size_t i = at;
  while (i > 0 && std::isspace(static_cast<unsigned char>(text[i - 1]))) --i;
  if (i >= 1 && text[i - 1] == '.') return true;
  if (i >= 2 && text[i - 2] == '-' && text[i - 1] == '>') return true;
  if (i >= 2 && text[i - 2] == ':' && text[i - 1] == ':') {
    i -= 2;
    while (i > 0 && std::isspace(static_cast<unsigned char>(text[i - 1]))) --i;
    size_t end = i;
    while (i > 0 && is_identifier_char(text[i - 1])) --i;
    std::string qualifier = text.substr(i, end - i);
    return !qualifier.empty() && qualifier != "std";
  }
  return false;
}

// Whether the parenthesised arguments opening at `open` (a '(' in blanked code) name `token`.
bool arguments_name(const std::string& code, size_t open, std::string_view token) {
  int depth = 0;
  size_t close = open;
  for (; close < code.size(); ++close) {
    if (code[close] == '(') ++depth;
    if (code[close] == ')' && --depth == 0) break;
  }
  std::string_view arguments(code.data() + open, std::min(close, code.size()) - open);
  for (size_t at = arguments.find(token); at != std::string_view::npos; at = arguments.find(token, at + 1)) {
    const size_t end = at + token.size();
    if (!is_identifier_char(arguments[at - 1]) && (end == arguments.size() || !is_identifier_char(arguments[end]))) return true;
  }
  return false;
}

// PTX instructions a CUDA candidate's inline asm may use: data movement, arithmetic, conversions,
// tensor-core MMA and its operand loads, asynchronous copies and barriers, which fast kernels
// need (mma.sync, ldmatrix, cp.async, wgmma). Nothing that reads a clock, a performance counter or
// the host, traps or sleeps; other opcodes, host (x86) asm among them, stay failures.
bool allowed_ptx_opcode(std::string_view opcode) {
  static const std::vector<std::string_view> allowed = {
      "abs",    "activemask", "add",      "and",     "atom",   "bar",       "barrier", "bfe",      "bfi",
      "brev",   "clz",        "copysign", "cos",     "cp",     "cvt",       "cvta",    "div",      "dp2a",
      "dp4a",   "elect",      "ex2",      "fence",   "fma",    "griddepcontrol", "ld", "ldmatrix", "ldu",
      "lg2",    "lop3",       "mad",      "match",   "max",    "mbarrier",  "membar",  "min",      "mma",
      "mov",    "movmatrix",  "mul",      "neg",     "not",    "or",        "popc",    "prefetch", "prefetchu",
      "prmt",   "rcp",        "red",      "redux",   "rem",    "rsqrt",     "selp",    "set",      "setmaxnreg",
      "setp",   "shf",        "shfl",     "shl",     "shr",    "sin",       "sqrt",    "st",       "stmatrix",
      "sub",    "tanh",       "tensormap", "testp",  "vote",   "wgmma",     "xor"};
  return std::find(allowed.begin(), allowed.end(), opcode) != allowed.end();
}

// The instruction of an inline asm template that a CUDA candidate may not use ("" when every one
// is allowed): an opcode outside allowed_ptx_opcode, or a read of a clock or performance counter
// (%clock, %clock64, %globaltimer, %pm0..7), which a mov could otherwise make.
std::string forbidden_ptx(std::string asm_template) {
  for (const char* escape : {"\\n", "\\t"})
    for (size_t at = asm_template.find(escape); at != std::string::npos; at = asm_template.find(escape, at))
      asm_template.replace(at, 2, " ");
  static const std::regex timer_register(R"(%(clock\w*|globaltimer\w*|pm[0-7]\w*))");
  std::smatch timer;
  if (std::regex_search(asm_template, timer, timer_register)) return timer.str(0);
  size_t begin = 0;
  while (begin < asm_template.size()) {
    size_t end = asm_template.find(';', begin);
    if (end == std::string::npos) end = asm_template.size();
    std::string instruction = asm_template.substr(begin, end - begin);
    begin = end + 1;
    std::replace(instruction.begin(), instruction.end(), '{', ' ');
    std::replace(instruction.begin(), instruction.end(), '}', ' ');
    std::istringstream words(instruction);
    std::string word;
    if (!(words >> word)) continue;
    if (word[0] == '@' && !(words >> word)) continue;          // a predicate guard: the opcode follows
    if (word[0] == '.' || word.back() == ':') continue;         // .reg / .pred declarations, labels
    const std::string opcode = word.substr(0, word.find('.'));
    if (!allowed_ptx_opcode(opcode)) return opcode;
  }
  return "";
}

// For the asm statement whose keyword is at `at`: the text of its template's string literals (up
// to the first top-level ':', where the operands begin).
std::string asm_template_at(const std::string& code, const std::string& literals, size_t at) {
  const size_t open = code.find('(', at);
  if (open == std::string::npos) return "";
  int depth = 0;
  size_t end = open;
  for (; end < code.size(); ++end) {
    if (code[end] == '(') ++depth;
    if (code[end] == ')' && --depth == 0) break;
    if (code[end] == ':' && depth == 1) break;
  }
  return literals.substr(open, end - open);
}

std::string line_text(std::string_view source, size_t at) {
  size_t begin = source.rfind('\n', at);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  size_t end = source.find('\n', at);
  if (end == std::string_view::npos) end = source.size();
  std::string line(source.substr(begin, end - begin));
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  line.erase(line.begin(), std::find_if(line.begin(), line.end(), not_space));
  line.erase(std::find_if(line.rbegin(), line.rend(), not_space).base(), line.end());
  if (line.size() > 120) line = line.substr(0, 117) + "...";
  return line;
}

}  // namespace

std::string blank_comments_and_literals(std::string_view source) { return split_cxx_source(source).code; }

std::vector<StaticFinding> scan_source(std::string_view source, Dialect dialect) {
  const CxxSourceViews views = split_cxx_source(source);
  const std::string& code = views.code;
  const std::string& literals = views.literals;
  struct Located {
    size_t offset;
    StaticFinding finding;
  };
  std::vector<Located> found;
  auto add = [&](size_t at, const char* rule_code, Severity severity, std::string name) {
    StaticFinding finding;
    finding.code = rule_code;
    finding.severity = severity;
    finding.line = static_cast<int>(std::count(source.begin(), source.begin() + static_cast<long>(at), '\n')) + 1;
    finding.name = std::move(name);
    finding.snippet = line_text(source, at);
    found.push_back({at, std::move(finding)});
  };
  const auto& all = rules();
  const auto& compiled = compiled_rules();
  for (size_t r = 0; r < all.size(); ++r) {
    const std::string& text = all[r].kind == Kind::literal ? literals : code;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), compiled[r]); it != std::sregex_iterator(); ++it) {
      size_t at = static_cast<size_t>(it->position(1));
      if (all[r].kind == Kind::call && foreign_call(code, at)) continue;
      std::string name = it->str(1);
      if (all[r].allowed_with_argument) {
        const size_t open = static_cast<size_t>(it->position(0) + it->length(0)) - 1;
        if (arguments_name(code, open, all[r].allowed_with_argument)) continue;
        name += std::string(" without ") + all[r].allowed_with_argument;
      }
      // A CUDA candidate's work belongs on ctx->stream: a host thread could queue it after the
      // call returned, where no thread count of the CUDA sandbox (whose runtime starts threads
      // of its own) would see it.
      const bool cuda_thread = dialect == Dialect::cuda && std::string_view(all[r].code) == "static.thread";
      // CUDA inline asm is allowed when all of it is PTX of the allowed kind (allowed_ptx_opcode).
      if (dialect == Dialect::cuda && std::string_view(all[r].code) == "static.inline_asm") {
        const std::string forbidden = forbidden_ptx(asm_template_at(code, literals, at));
        if (forbidden.empty()) continue;
        name += " (" + forbidden + ")";
      }
      add(at, all[r].code, cuda_thread ? Severity::failure : all[r].severity, std::move(name));
    }
  }
  // A side stream that nothing joins: no stream waits on an event, no host call waits for it.
  static const std::regex joins(R"(\b(?:cudaStreamWaitEvent|cudaStreamSynchronize|cudaDeviceSynchronize)\s*\()");
  static const std::regex creates(R"(\b(cudaStreamCreate\w*|cudaStreamPerThread)\b)");
  std::smatch created;
  if (std::regex_search(code, created, creates) && !std::regex_search(code, joins))
    add(static_cast<size_t>(created.position(1)), "static.stream_unjoined", Severity::failure,
        created.str(1) + " without cudaStreamWaitEvent");
  std::stable_sort(found.begin(), found.end(), [](const Located& a, const Located& b) { return a.offset < b.offset; });
  std::vector<StaticFinding> findings;
  for (auto& located : found) findings.push_back(std::move(located.finding));
  return findings;
}

std::string describe(const StaticFinding& finding) {
  return "line " + std::to_string(finding.line) + ": `" + finding.snippet + "` (" + finding.name + ")";
}

}  // namespace drk::verifier
