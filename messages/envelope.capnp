# The runtime's own contract: the Envelope every message travels in, and the messages of the
# runtime itself (control, heartbeats, inspection, the node protocol). An application's messages
# travel as the Envelope's `payload`, an opaque pointer whose type the Envelope names
# (`payloadType`): the runtime knows them only by type id, through the types the application
# registers (runtime/transport/payload_types.h).
#
# Versioning: this schema replaced the Envelope of drk.capnp (file id 0xcdf59aaaa855f21b), whose
# body union held the application's messages; it is a fresh schema with a file id of its own,
# not a renumbering of the old one. Before its first release `payload` changed from a struct
# holding the type id and the message to the message itself, its type id moving into the
# Envelope (`payloadType`, which envelopes of that earlier form lack): either form reads the
# other's payload as one of a type it does not register, and refuses it instead of misreading
# it. From here on the evolution rules of drk.capnp hold: new fields and union members only
# with higher ordinals, never renumbered, retyped or reused; defaults chosen so that "absent"
# means "old sender".
# Bytes from another process are untrusted: read them with runtime/transport/codec.h (limits, a
# size cap, and a schema check that follows the payload into its registered type).
@0xc7da9b5e54dc59df;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drk::msg");

struct Envelope {
  sender @0 :Text;          # actor name, e.g. "generator.1"
  recipient @1 :Text;       # actor name
  correlationId @2 :UInt64; # pairs a reply with its request
  traceId @3 :UInt64;       # follows one piece of work across hops
  deadlineUnixMs @4 :Int64; # 0: no deadline; past it the message is dead on arrival
  sentUnixMs @5 :Int64;
  # The Cap'n Proto type id of the struct `payload` holds; 0 when the body is not a payload. A
  # receiver reads a payload only when it has registered its type: an envelope whose payload is
  # of a type it does not know, or does not fit its type, is refused (a dead letter).
  payloadType @15 :UInt64;
  body :union {
    payload @6 :AnyPointer; # an application's message, a struct of type `payloadType`
    control @7 :Control;
    heartbeat @8 :Heartbeat;
    hostStats @9 :HostStats;
    inspectRequest @10 :InspectRequest;
    systemReport @11 :SystemReport;
    nodeJoin @12 :NodeJoin;
    nodeWelcome @13 :NodeWelcome;
    nodeHeartbeat @14 :NodeHeartbeat;
  }
}

struct Control {
  union {
    peerRestarted @0 :Text;     # supervisor -> all: this actor was restarted; resend what it held
    shutdown @1 :Void;
    ping @2 :Void;
    peerLost @3 :Text;          # head -> all: this actor's node is unreachable; move its work
  }
}

struct Heartbeat {
  incarnation @0 :UInt64;
  sequence @1 :UInt64;
}

# Inspection (docs/inspection.md). Every actor host sends HostStats to "head" once a second;
# `drk inspect` sends InspectRequest to the head's inspection endpoint (RUN_DIR/inspect.endpoint)
# and gets a SystemReport back.

enum ActorStatus {
  starting @0;                  # on_start has not returned yet, or its process has not reported
  running @1;
  stopped @2;                   # on_stop has run
  dead @3;                      # its process is down
}

# One actor as its host measures it. Counters restart from 0 with the actor's process.
struct ActorReport {
  name @0 :Text;
  role @1 :Text;
  process @2 :Text;
  pid @3 :Int32;
  status @4 :ActorStatus;
  messagesReceived @5 :UInt64;  # taken off the mailbox socket
  messagesHandled @6 :UInt64;   # whose handler returned
  timersFired @7 :UInt64;
  mailboxDepth @8 :UInt64;      # received, not yet handled nor dropped (ZeroMQ's queue unseen)
  mailboxCapacity @9 :UInt64;
  meanHandlerMs @10 :Float64;   # over every handler call (messages and timers)
  maxHandlerMs @11 :Float64;
  currentHandler @12 :Text;     # the kind of message (or "timer", "on_start") running now; "" idle
  currentHandlerSeconds @13 :Float64;
  deadLetters @14 :UInt64;
  recentDeadLetters @15 :List(Text);  # the latest reasons, oldest first
  messagesPerSecond @16 :Float64;     # handled, over the last few seconds
}

# Actor host -> head, once a second.
struct HostStats {
  process @0 :Text;
  incarnation @1 :UInt64;
  pid @2 :Int32;
  actors @3 :List(ActorReport);
}

# drk inspect -> head.
struct InspectRequest {}

enum ProcessStatus { running @0; down @1; stopping @2; }

# A process as the supervisor sees it.
struct ProcessReport {
  name @0 :Text;
  pid @1 :Int32;                # 0 while down
  status @2 :ProcessStatus;
  incarnation @3 :UInt64;
  restarts @4 :UInt32;
  recentCauses @5 :List(Text);  # why it ended, the latest last ("killed by SIGKILL", ...)
  reportAgeSeconds @6 :Float64; # since its host's last HostStats; -1: none from this incarnation
}

# head -> drk inspect: the whole system at one moment.
struct SystemReport {
  topology @0 :Text;
  runDir @1 :Text;
  takenUnixMs @2 :Int64;
  processes @3 :List(ProcessReport);
  actors @4 :List(ActorReport);
  nodes @5 :List(NodeReport);
  refusedPeers @6 :UInt64;      # connections refused by CURVE authentication at the head
  training @7 :Text;            # the newest progress line as the head printed it (from the
                                # application's progress observer, runtime/progress_observer.h;
                                # drkernel's: its training steps); "" before the first
}

# Multi-node (docs/multi-node.md). `drk node` talks to the head's node endpoint
# (network.listen, a ROUTER) through one DEALER: NodeJoin until welcomed, then a NodeHeartbeat
# every network.heartbeat_ms; the head sends its own NodeHeartbeat back, and Control.shutdown
# when the run ends. A node silent for network.node_timeout_ms is lost.
struct NodeJoin {
  node @0 :Text;                # its name in the topology's `nodes:`
  host @1 :Text;                # where other nodes reach its mailboxes
  bindHost @2 :Text;
  portBase @3 :UInt16;
  publicKey @4 :Text;           # Z85; empty without CURVE
  pid @5 :Int32;
  incarnation @6 :UInt64;       # differs every time `drk node` starts
}

struct NodeWelcome {
  refused @0 :Text;             # non-empty: the join is refused for this reason
  runId @1 :UInt64;             # changes when the head starts again
  topologyYaml @2 :Text;        # the resolved topology
  networkYaml @3 :Text;         # every node's address (network.yaml)
}

struct NodeHeartbeat {
  node @0 :Text;                # "head" for the head's
  incarnation @1 :UInt64;
  sequence @2 :UInt64;
  processes @3 :List(ProcessReport);  # the node's supervisor's view (none from the head)
}

enum NodeStatus { waiting @0; joined @1; lost @2; }

struct NodeReport {
  name @0 :Text;
  status @1 :NodeStatus;
  address @2 :Text;             # host:port_base
  lastHeartbeatAgeSeconds @3 :Float64;  # -1: never
  losses @4 :UInt32;            # times it was lost
  lastLossCause @5 :Text;
}
