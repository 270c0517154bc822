#include "actors/verifier/static_checks.h"

#include <string>
#include <vector>

#include "tests/doctest_drk.h"

namespace {

using drk::verifier::scan_source;

std::vector<std::string> codes(const std::string& source) {
  std::vector<std::string> out;
  for (const auto& finding : scan_source(source)) out.push_back(finding.code);
  return out;
}

}  // namespace

DRK_TEST_CASE("each rule names its reason code") {
  DRK_CHECK(codes("int f() { return fork(); }") == std::vector<std::string>{"static.process"});
  DRK_CHECK(codes("void f() { std::system(\"ls\"); }") == std::vector<std::string>{"static.process"});
  DRK_CHECK(codes("void f() { execvp(a, b); popen(c, d); }") ==
            std::vector<std::string>{"static.process", "static.process"});
  DRK_CHECK(codes("std::thread t(work);") == std::vector<std::string>{"static.thread"});
  DRK_CHECK(codes("pthread_create(&t, 0, f, 0);") == std::vector<std::string>{"static.thread"});
  DRK_CHECK(codes("auto t = std::chrono::steady_clock::now();") == std::vector<std::string>{"static.timer"});
  DRK_CHECK(codes("clock_gettime(CLOCK_MONOTONIC, &ts);") == std::vector<std::string>{"static.timer"});
  DRK_CHECK(codes("uint64_t c = __rdtsc();") == std::vector<std::string>{"static.timer"});
  DRK_CHECK(codes("cudaEvent_t e; cudaEventCreate(&e); cudaEventElapsedTime(&ms, a, b);") ==
            std::vector<std::string>{"static.timer", "static.timer"});
  DRK_CHECK(codes("void* h = dlopen(0, 0); dlsym(h, s);") ==
            std::vector<std::string>{"static.dynamic_loading", "static.dynamic_loading"});
  DRK_CHECK(codes("int f() { return dl_iterate_phdr(visit, 0); }") == std::vector<std::string>{"static.dynamic_loading"});
  DRK_CHECK(codes("extern struct r_debug _r_debug;") ==
            std::vector<std::string>{"static.dynamic_loading", "static.dynamic_loading"});
  DRK_CHECK(codes("signal(SIGALRM, h); alarm(1);") == std::vector<std::string>{"static.signal", "static.signal"});
  DRK_CHECK(codes("FILE* f = fopen(p, m);") == std::vector<std::string>{"static.file"});
  DRK_CHECK(codes("int s = socket(AF_INET, SOCK_STREAM, 0);") == std::vector<std::string>{"static.network"});
  DRK_CHECK(codes("const char* s = getenv(name);") == std::vector<std::string>{"static.environment"});
  DRK_CHECK(codes("const char* p = \"/dev/urandom\";") == std::vector<std::string>{"static.environment"});
  DRK_CHECK(codes("asm volatile(\"nop\");") == std::vector<std::string>{"static.inline_asm"});
  DRK_CHECK(codes("cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);") ==
            std::vector<std::string>{"static.stream"});
  DRK_CHECK(codes("int n = write(4, frame, 16);") == std::vector<std::string>{"static.channel"});
  DRK_CHECK(codes("dup2(fds[1], 4); ::close(fds[0]);") == std::vector<std::string>{"static.channel", "static.channel"});
  DRK_CHECK(codes("auto* h = static_cast<char*>(ctx->harness);") == std::vector<std::string>{"static.channel"});
  DRK_CHECK(codes("cudaCtxResetPersistingL2Cache();") == std::vector<std::string>{"static.device_setting"});
  DRK_CHECK(codes("cublasHandle_t h; cublasCreate(&h);") == std::vector<std::string>{"static.library_handle"});
  DRK_CHECK(codes("__attribute__((constructor)) static void early() {}") ==
            std::vector<std::string>{"static.global_constructor"});
}

DRK_TEST_CASE("comments, string literals and includes trigger nothing") {
  DRK_CHECK(codes("// fork() and dlopen() are forbidden\nint x = 0;").empty());
  DRK_CHECK(codes("/* std::thread\n   getenv() */ int y;").empty());
  DRK_CHECK(codes("const char* m = \"call fork() or system()\";").empty());
  DRK_CHECK(codes("const char* r = R\"x(dlopen(\"a\"))x\";").empty());
  DRK_CHECK(codes("#include <thread>\n#include <chrono>\n#include <dlfcn.h>\n").empty());
  DRK_CHECK(codes("char c = '\"'; int z = fork_count(1'000);").empty());
}

DRK_TEST_CASE("member calls, other namespaces and look-alike names do not match") {
  DRK_CHECK(codes("file.open(path); stream->connect(x); mine::signal(3);").empty());
  DRK_CHECK(codes("int forked = 1; float timer = 2; auto v = std::remove(a, b, c);").empty());
  DRK_CHECK(codes("float system_total = 0; int open_count = 0;").empty());
}

DRK_TEST_CASE("a finding has its line and the line's text") {
  auto findings = scan_source("#include \"drk_kernel.h\"\n\nint f() {\n    pid_t child = fork();\n}\n");
  DRK_REQUIRE(findings.size() == 1);
  DRK_CHECK(findings[0].line == 4);
  DRK_CHECK(findings[0].name == "fork");
  DRK_CHECK(findings[0].snippet == "pid_t child = fork();");
  DRK_CHECK(drk::verifier::describe(findings[0]) == "line 4: `pid_t child = fork();` (fork)");
  DRK_CHECK(findings[0].severity == drk::verifier::Severity::failure);
  DRK_CHECK(scan_source("std::thread t;")[0].severity == drk::verifier::Severity::warning);
}

DRK_TEST_CASE("blanking keeps offsets and newlines") {
  std::string source = "a // b\n\"c\" /* d\n e */ f";
  std::string blanked = drk::verifier::blank_comments_and_literals(source);
  DRK_CHECK(blanked.size() == source.size());
  DRK_CHECK(blanked == "a     \n\" \"     \n      f");
}

namespace {

std::vector<std::string> cuda_codes(const std::string& source) {
  std::vector<std::string> out;
  for (const auto& finding : scan_source(source, drk::verifier::Dialect::cuda))
    out.push_back(finding.code + (finding.severity == drk::verifier::Severity::warning ? " (warning)" : ""));
  return out;
}

}  // namespace

DRK_TEST_CASE("CUDA inline asm: tensor-core and copy PTX pass; timers, counters, traps and host asm fail") {
  // What fast kernels use: mma.sync, ldmatrix, cp.async, predicated and braced templates, .reg.
  const std::string kernel =
      "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" :: \"r\"(d), \"l\"(s), \"r\"(n) : \"memory\");\n"
      "asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
      "             : \"=r\"(a), \"=r\"(b), \"=r\"(c), \"=r\"(e) : \"r\"(p));\n"
      "asm(\"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, \"\n"
      "    \"{%0, %1, %2, %3};\\n\" : \"+f\"(d0) : \"r\"(a0));\n"
      "asm(\"{\\n .reg .pred p;\\n setp.ne.b32 p, %1, 0;\\n @p mov.b32 %0, %1;\\n}\" : \"=r\"(x) : \"r\"(y));\n"
      "asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(2) : \"memory\");";
  DRK_CHECK(cuda_codes(kernel).empty());
  // A clock or counter read, through mov or in a braced template, is still the failure; so are
  // opcodes outside the list (a trap, a sleep) and host asm in a .cu file.
  for (const char* hostile : {"asm volatile(\"mov.u64 %0, %globaltimer;\" : \"=l\"(t));",
                              "asm(\"{ mov.u32 %0, %clock; }\" : \"=r\"(c));",
                              "asm volatile(\"mov.u32 %0, %pm0;\" : \"=r\"(c));",
                              "asm(\"trap;\");", "asm volatile(\"nanosleep.u32 100;\");",
                              "__asm__ __volatile__(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi));"}) {
    DRK_INFO(hostile);
    const auto findings = scan_source(hostile, drk::verifier::Dialect::cuda);
    DRK_REQUIRE(findings.size() == 1);
    DRK_CHECK(findings[0].code == "static.inline_asm");
    DRK_CHECK(findings[0].severity == drk::verifier::Severity::failure);
  }
  DRK_CHECK(scan_source("asm volatile(\"mov.u64 %0, %globaltimer;\" : \"=l\"(t));", drk::verifier::Dialect::cuda)[0]
                .name == "asm (%globaltimer)");
  // A C++ (CPU) candidate's asm is a failure whatever it holds.
  DRK_CHECK(codes("asm volatile(\"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0};\");") ==
            std::vector<std::string>{"static.inline_asm"});
}

DRK_TEST_CASE("events that cannot time join streams; events that time are timers") {
  const std::string joined =
      "cudaEvent_t done; cudaEventCreateWithFlags(&done, cudaEventDisableTiming);\n"
      "cudaEventRecord(done, side); cudaStreamWaitEvent(stream, done, 0); cudaEventDestroy(done);";
  DRK_CHECK(codes(joined).empty());
  auto timing = scan_source("cudaEventCreateWithFlags(&e, cudaEventDefault);");
  DRK_REQUIRE(timing.size() == 2);
  DRK_CHECK(timing[0].name == "cudaEventCreateWithFlags without cudaEventDisableTiming");
  DRK_CHECK(timing[1].name == "cudaEventDefault");
  DRK_CHECK(codes("cudaEventSynchronize(e); cudaEventQuery(e);") ==
            std::vector<std::string>{"static.timer", "static.timer"});
  // The flag must be the argument, not a name that contains it.
  DRK_CHECK(codes("cudaEventCreateWithFlags(&e, notcudaEventDisableTiming);") ==
            std::vector<std::string>{"static.timer"});
}

DRK_TEST_CASE("a side stream is a warning when something joins it, a failure when nothing does") {
  const std::string joined =
      "cudaStream_t side; cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);\n"
      "cudaEventRecord(done, side);\ncudaStreamWaitEvent(stream, done, 0);";
  DRK_CHECK(cuda_codes(joined) == std::vector<std::string>{"static.side_stream (warning)"});
  auto unjoined = scan_source("int f() {\n  cudaStream_t s;\n  cudaStreamCreate(&s);\n  k<<<1, 1, 0, s>>>();\n}");
  DRK_REQUIRE(unjoined.size() == 2);
  DRK_CHECK(unjoined[0].code == "static.side_stream");
  DRK_CHECK(unjoined[1].code == "static.stream_unjoined");
  DRK_CHECK(unjoined[1].line == 3);
  DRK_CHECK(unjoined[1].severity == drk::verifier::Severity::failure);
  DRK_CHECK(codes("k<<<1, 1, 0, cudaStreamPerThread>>>();") ==
            std::vector<std::string>{"static.side_stream", "static.stream_unjoined"});
  DRK_CHECK(codes("k<<<1, 1, 0, cudaStreamPerThread>>>(); cudaStreamSynchronize(cudaStreamPerThread);") ==
            std::vector<std::string>{"static.side_stream", "static.side_stream"});
}

DRK_TEST_CASE("threads are a warning in C++ and a failure in CUDA C++") {
  DRK_CHECK(cuda_codes("std::thread t(launch); t.detach();") == std::vector<std::string>{"static.thread"});
  DRK_CHECK(codes("std::thread t(work); t.join();") == std::vector<std::string>{"static.thread"});
  DRK_CHECK(scan_source("std::thread t(work);")[0].severity == drk::verifier::Severity::warning);
}

DRK_TEST_CASE("reads and writes of members or other namespaces are not the result channel") {
  DRK_CHECK(codes("out.write(x); file->read(b, n); io::close(h); float harness_scale = 1;").empty());
}
