#include "runtime/transport/payload_types.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <memory>
#include <mutex>

#include "messages/envelope.capnp.h"

namespace drk::runtime {
namespace {

// One published state of the registry: readers load the newest with one atomic load and keep
// using what they loaded, so that no state is ever freed.
struct Snapshot {
  std::vector<const PayloadType*> types;  // sorted by id
  std::unique_ptr<const SchemaCheck> envelope_check;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<const PayloadType>> types;
  std::vector<std::unique_ptr<const Snapshot>> snapshots;
  std::atomic<const Snapshot*> current{nullptr};

  // Publishes the types registered so far. Call with `mutex` held.
  void publish() {
    auto snapshot = std::make_unique<Snapshot>();
    TypedPointers typed{capnp::Schema::from<msg::Envelope>().getFieldByName("payloadType"),
                        capnp::Schema::from<msg::Envelope::Body>().getFieldByName("payload"),
                        {}};
    for (const auto& type : types) {
      snapshot->types.push_back(type.get());
      typed.types.push_back(type->schema);
    }
    std::sort(snapshot->types.begin(), snapshot->types.end(),
              [](const PayloadType* a, const PayloadType* b) { return a->id < b->id; });
    snapshot->envelope_check = std::make_unique<SchemaCheck>(capnp::Schema::from<msg::Envelope>(), typed);
    current.store(snapshot.get(), std::memory_order_release);
    snapshots.push_back(std::move(snapshot));
  }
};

// Never destroyed: actor threads may still read it while the program exits.
Registry& registry() {
  static Registry* const instance = [] {
    auto* created = new Registry;
    created->publish();
    return created;
  }();
  return *instance;
}

const Snapshot& current() { return *registry().current.load(std::memory_order_acquire); }

std::string name_of(capnp::StructSchema schema) {
  std::string name = schema.getShortDisplayName().cStr();
  if (!name.empty()) name[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[0])));
  return name;
}

}  // namespace

void register_payload_types(const std::vector<capnp::StructSchema>& types) {
  Registry& registered = registry();
  const std::lock_guard lock(registered.mutex);
  bool added = false;
  for (const auto schema : types) {
    const uint64_t id = schema.getProto().getId();
    const bool known = std::any_of(registered.types.begin(), registered.types.end(),
                                   [&](const auto& type) { return type->id == id; });
    if (known) continue;
    registered.types.push_back(std::make_unique<const PayloadType>(PayloadType{id, schema, name_of(schema)}));
    added = true;
  }
  if (added) registered.publish();
}

const PayloadType* find_payload_type(uint64_t id) {
  // The type this thread found last: an actor's envelopes come in runs of one type, and a type,
  // once registered, stays as it is.
  thread_local const PayloadType* last_found = nullptr;
  if (last_found != nullptr && last_found->id == id) return last_found;
  const auto& types = current().types;
  const auto found = std::lower_bound(types.begin(), types.end(), id,
                                      [](const PayloadType* type, uint64_t wanted) { return type->id < wanted; });
  if (found == types.end() || (*found)->id != id) return nullptr;
  last_found = *found;
  return last_found;
}

const SchemaCheck& envelope_check() { return *current().envelope_check; }

}  // namespace drk::runtime
