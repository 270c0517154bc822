#!/usr/bin/env bash
# Writes decode_fuzz's seed corpus (tests/fuzz/corpus/): one real encoded Envelope per body
# kind (each of the training's messages as a payload, and the runtime's own), in the wire form
# runtime::encode produces (segment table, then the segments), plus a few written in small
# segments so that multi-segment messages and far pointers are seeds too.
# capnp's text form cannot fill an AnyPointer, so a payload is encoded through a struct of the
# Envelope's layout whose payload names the domain type (the same bytes on the wire).
# Run it again after a change to messages/envelope.capnp or messages/drk.capnp:
# tests/fuzz/make_corpus.sh
# Needs the `capnp` tool (Debian: capnproto).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/tests/fuzz/corpus"
mkdir -p "$out"
rm -f "$out"/*.bin

task='(name = "relu", family = "elementwise", device = cpu,
  inputs = [(name = "x", shape = [4096, 393216], dtype = float32)],
  outputs = [(name = "y", shape = [4096, 393216], dtype = float32)],
  reference = "torch.relu(x)", params = [(key = "rows", value = "4096"), (key = "vector", value = "8")],
  flops = 1.6e9, minBytes = 1.2e10)'
candidate='(id = "s3/relu/2/t1", trajectoryId = "s3/relu/2", turn = 1, task = "relu", device = cpu,
  language = cpp, source = "extern \"C\" int drk_kernel(void) { return 0; }\n",
  schedule = (family = "elementwise", decisions = [
    (knob = "vector", option = 2, value = "8", logprob = -0.69),
    (knob = "unroll", option = 0, value = "1", logprob = -1.1)]),
  policyVersion = 4, generator = "generator.1", step = 3)'
timing='(medianUs = 12.5, p10Us = 11.9, p90Us = 13.4, cv = 0.04, samples = 30, callsPerSample = 8)'
result="(candidate = $candidate, evaluator = \"evaluator.0\", compiled = true, compileLog = \"\",
  compileCached = false, compileMs = 412.5, sandbox = ok, correct = true, trials = 3, trialsPassed = 3,
  maxAbsError = 1e-6, maxRelError = 2e-6, errorText = \"\", candidateTiming = $timing,
  referenceTiming = $timing, speedup = 1.43,
  evidence = (outputsLeftPoisoned = false, inputsMutated = false, nonFinite = false,
    sandboxSignal = 0, sandboxExitCode = 0, candidateStatus = 0, wallCheckRatio = 1.01),
  evalMs = 530.25)"
verdict="(result = $result, honest = false,
  failedChecks = [(code = \"inputs_mutated\", evidence = \"x[17] changed\")])"
turn='(candidateId = "s3/relu/2/t1", family = "elementwise", observation = [0.5, -1.25, 3.0],
  actions = [2, 0, 5], actionLogprobs = [-0.69, -1.1, -2.3], reward = 0.8, correct = true,
  honest = true, speedup = 1.43, coverage = 1.0)'
trajectory="(id = \"s3/relu/2\", step = 3, task = \"relu\", sampleIndex = 2, policyVersion = 4,
  turns = [$turn, $turn])"
header='sender = "oracle", recipient = "generator.1", correlationId = 77, traceId = 9001,
  deadlineUnixMs = 1764500000000, sentUnixMs = 1764499999000'

declare -A bodies=(
  [rolloutRequest]="(step = 3, policyVersion = 4, trajectoryId = \"s3/relu/2\", sampleIndex = 2, turns = 2, task = $task)"
  [candidate]="$candidate"
  [evalRequest]="(candidate = $candidate, attempt = 2)"
  [evalResult]="$result"
  [verdict]="$verdict"
  [feedback]="(candidateId = \"s3/relu/2/t1\", reward = 0.8, verdict = $verdict, summary = \"correct, 1.43x\")"
  [trajectory]="$trajectory"
  [advantageRequest]="(step = 3, estimator = trloo, trajectories = [$trajectory])"
  [advantages]='(step = 3, items = [(trajectoryId = "s3/relu/2", turn = 1, return = 0.8, advantage = 0.1)])'
  [policyWeights]='(version = 4, step = 3, parameters = 0x"00 01 02 03 04 05 06 07 08 09 0a 0b")'
  [stepReport]='(step = 3, policyVersion = 4, meanReward = 0.9, bestSpeedup = 1.43, correctFraction = 0.75,
    trajectories = 32, loss = -0.01, seconds = 22.5, finished = false, clipFraction = 0.1, approxKl = 0.002)'
  [scored]="(verdict = $verdict, reward = 0.8)"
  [control]='(peerRestarted = "evaluator.0")'
  [heartbeat]='(incarnation = 5, sequence = 42)'
  [evaluatorReady]='(incarnation = 5, slots = 1)'
)

# The Envelope with its payload typed as each kind, in a schema of the corpus's own.
schema_dir=$(mktemp -d)
trap 'rm -rf "$schema_dir"' EXIT
cp "$root/messages/envelope.capnp" "$root/messages/drk.capnp" "$schema_dir/"
ids=$(capnp compile -ocapnp -I/usr/include -I"$schema_dir" "$schema_dir/drk.capnp")
runtime_members='control @7 :E.Control; heartbeat @8 :E.Heartbeat; hostStats @9 :E.HostStats;
    inspectRequest @10 :E.InspectRequest; systemReport @11 :E.SystemReport; nodeJoin @12 :E.NodeJoin;
    nodeWelcome @13 :E.NodeWelcome; nodeHeartbeat @14 :E.NodeHeartbeat;'
{
  echo '@0xe3b1c2d4a5f60718;'
  echo 'using E = import "envelope.capnp";'
  echo 'using D = import "drk.capnp";'
  for kind in "${!bodies[@]}"; do
    type="${kind^}"
    [[ $kind == control || $kind == heartbeat ]] && continue
    echo "struct Envelope$type { sender @0 :Text; recipient @1 :Text; correlationId @2 :UInt64;
  traceId @3 :UInt64; deadlineUnixMs @4 :Int64; sentUnixMs @5 :Int64; payloadType @15 :UInt64;
  body :union { payload @6 :D.$type; $runtime_members } }"
  done
} > "$schema_dir/corpus.capnp"

encode() {  # NAME SCHEMA STRUCT [capnp encode options...] < text
  local name=$1 schema=$2 root_struct=$3
  shift 3
  capnp encode "$@" -I/usr/include -I"$schema_dir" "$schema_dir/$schema" "$root_struct" > "$out/$name.bin"
}
type_id() {  # TYPE: its Cap'n Proto id, as capnp prints it
  grep -oE "^struct $1 @0x[0-9a-f]+" <<< "$ids" | grep -oE "0x[0-9a-f]+"
}
seed() {  # NAME KIND [capnp encode options...]
  local name=$1 kind=$2
  shift 2
  if [[ $kind == control || $kind == heartbeat ]]; then
    echo "($header, body = ($kind = ${bodies[$kind]}))" | encode "$name" envelope.capnp Envelope "$@"
  else
    local type="${kind^}"
    echo "($header, payloadType = $(type_id "$type"), body = (payload = ${bodies[$kind]}))" |
      encode "$name" corpus.capnp "Envelope$type" "$@"
  fi
}
for kind in "${!bodies[@]}"; do seed "$kind" "$kind"; done
echo "($header, body = (control = (shutdown = void)))" | encode control-shutdown envelope.capnp Envelope
echo "($header, body = (control = (ping = void)))" | encode control-ping envelope.capnp Envelope
echo "()" | encode empty-envelope envelope.capnp Envelope
for kind in evalResult advantageRequest feedback; do seed "$kind-small-segments" "$kind" --segment-size=16; done
echo "make_corpus: $(ls "$out" | wc -l) seeds in $out"
