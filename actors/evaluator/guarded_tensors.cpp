#include "actors/evaluator/guarded_tensors.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "actors/evaluator/sandbox_device.h"

namespace drk::evaluator {
namespace {

constexpr std::size_t kDataAlignment = 64;
constexpr char kLinePrefix[] = "drk-sandbox: out of bounds: ";

// What the signal handler knows of one guarded tensor (plain values: read in a handler).
struct GuardedRange {
  uintptr_t mapping_begin = 0, mapping_end = 0;  // guard, data, guard
  uintptr_t data_begin = 0;
  uint64_t data_bytes = 0;
  char label[64] = {};
};

// Set while a GuardedTensors lives; read only by the handler.
const std::vector<GuardedRange>* guarded_ranges = nullptr;

// Async-signal-safe output: a string, a signed decimal.
void put(const char* text) { (void)!::write(2, text, std::strlen(text)); }

void put_number(int64_t value) {
  char digits[24];
  int at = sizeof digits;
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  do {
    digits[--at] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) digits[--at] = '-';
  (void)!::write(2, digits + at, sizeof digits - at);
}

const char* access_kind(void* context) {
#if defined(__x86_64__)
  // Bit 1 of the page fault's error code: the access was a write.
  const auto* machine = &static_cast<ucontext_t*>(context)->uc_mcontext;
  return (machine->gregs[REG_ERR] & 2) != 0 ? "a write" : "a read";
#else
  (void)context;
  return "an access";
#endif
}

void on_fault(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  if (guarded_ranges != nullptr) {
    for (const GuardedRange& range : *guarded_ranges) {
      if (address < range.mapping_begin || address >= range.mapping_end) continue;
      put(kLinePrefix);
      put(access_kind(context));
      put(" at byte ");
      put_number(static_cast<int64_t>(address - range.data_begin));
      put(" of ");
      put(range.label);
      put(", a tensor of ");
      put_number(static_cast<int64_t>(range.data_bytes));
      put(" bytes\n");
      ::_exit(kOutOfBoundsExit);
    }
  }
  // Not a guard: die of the signal, as without the guards.
  ::signal(signal, SIG_DFL);
}

}  // namespace

struct GuardedTensors::Mapping {
  void* base = MAP_FAILED;
  std::size_t bytes = 0;
};

Result<std::unique_ptr<GuardedTensors>> GuardedTensors::create(const std::vector<Entry>& entries) {
  std::unique_ptr<GuardedTensors> guarded(new GuardedTensors());
  static std::vector<GuardedRange> ranges;
  ranges.clear();
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  for (const Entry& entry : entries) {
    drk_tensor& tensor = *entry.tensor;
    const uint64_t bytes = tensor_bytes(tensor);
    // Rounding the start down to 64 bytes stays within the first data page (itself aligned).
    const std::size_t data_pages = (bytes + page - 1) / page;
    const std::size_t total = (data_pages + 2) * page;
    void* base = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
      return make_error(Errc::io_error, "cannot map " + std::to_string(total) + " bytes for the guarded copy of " +
                                            entry.label + ": " + std::strerror(errno));
    guarded->mappings_.push_back({base, total});
    auto* const data_area = static_cast<std::byte*>(base) + page;
    if (::mprotect(data_area, data_pages * page, PROT_READ | PROT_WRITE) != 0)
      return make_error(Errc::io_error, "cannot open the guarded copy of " + entry.label + ": " + std::strerror(errno));
    // The last byte as close to the trailing guard as a 64-byte aligned start allows.
    const auto area_end = reinterpret_cast<uintptr_t>(data_area + data_pages * page);
    const uintptr_t data_begin = (area_end - bytes) / kDataAlignment * kDataAlignment;
    std::memcpy(reinterpret_cast<void*>(data_begin), tensor.data, bytes);
    tensor.data = reinterpret_cast<void*>(data_begin);

    GuardedRange range;
    range.mapping_begin = reinterpret_cast<uintptr_t>(base);
    range.mapping_end = range.mapping_begin + total;
    range.data_begin = data_begin;
    range.data_bytes = bytes;
    std::strncpy(range.label, entry.label.c_str(), sizeof range.label - 1);
    ranges.push_back(range);
  }
  guarded_ranges = &ranges;
  struct sigaction action {};
  action.sa_sigaction = &on_fault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSEGV, &action, &guarded->previous_segv_);
  ::sigaction(SIGBUS, &action, &guarded->previous_bus_);
  guarded->handlers_installed_ = true;
  return guarded;
}

GuardedTensors::~GuardedTensors() {
  if (handlers_installed_) {
    ::sigaction(SIGSEGV, &previous_segv_, nullptr);
    ::sigaction(SIGBUS, &previous_bus_, nullptr);
    guarded_ranges = nullptr;
  }
  for (const Mapping& mapping : mappings_) ::munmap(mapping.base, mapping.bytes);
}

std::string parse_out_of_bounds(const std::string& output) {
  const std::size_t at = output.find(kLinePrefix);
  if (at == std::string::npos) return "";
  const std::size_t end = output.find('\n', at);
  return output.substr(at + sizeof kLinePrefix - 1, end == std::string::npos ? std::string::npos : end - at - (sizeof kLinePrefix - 1));
}

}  // namespace drk::evaluator
