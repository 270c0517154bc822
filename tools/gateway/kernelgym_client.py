#!/usr/bin/env python3
"""A reward client written only from KernelGYM's documented HTTP API, as a verl recipe's is.

It submits one KernelBench problem's reference and one or more `ModelNew` candidates to a
KernelGYM-compatible server (`drk serve`, docs/gateway.md), polls `/status/{id}` once a second
as KernelGYM's own client does, reads `/results/{id}`, prints one line per candidate and exits 1
when a candidate named with `--expect-correct` is not compiled and correct (2 on a bad argument,
3 when the server cannot be reached or times out). Standard library only.

    python3 tools/gateway/kernelgym_client.py --url http://127.0.0.1:8000 \
        --reference level1/19_ReLU.py --candidate cuda=relu_cuda.py --candidate triton=relu_triton.py \
        --expect-correct [--num-warmup N] [--enable-profiling]
With --enable-profiling a result without metadata.profile is a failure too.
"""
import argparse
import json
import sys
import time
import urllib.error
import urllib.request
import uuid


def call(url, method="GET", body=None, token=None, timeout_s=30.0):
    """(status, parsed JSON body, headers) of one request; HTTP errors are answers, not exceptions."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            return answer.status, json.loads(answer.read() or b"null"), answer.headers
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text), error.headers
        except ValueError:
            return error.code, {"detail": text.decode(errors="replace")}, error.headers


def submit(url, token, task):
    """POST /evaluate, waiting out 429s as the server's Retry-After says."""
    while True:
        status, body, headers = call(f"{url}/evaluate", "POST", task, token)
        if status != 429:
            break
        time.sleep(float(headers.get("Retry-After", "1")))
    if status != 200:
        raise RuntimeError(f"POST /evaluate answered {status}: {body}")
    return body["task_id"]


def wait_for_result(url, token, task_id, poll_s, deadline_s):
    """Polls /status/{id} until the task is finished, then reads /results/{id}."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        status, body, _ = call(f"{url}/status/{task_id}", token=token)
        if status == 200 and body.get("status") in ("completed", "failed", "cancelled"):
            status, result, _ = call(f"{url}/results/{task_id}", token=token)
            return result
        time.sleep(poll_s)
    raise TimeoutError(f"task {task_id} not finished after {deadline_s} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=None, help="the bearer token, when the server asks for one")
    parser.add_argument("--reference", required=True, help="a KernelBench problem file (Model, get_inputs)")
    parser.add_argument("--candidate", action="append", required=True, metavar="BACKEND=FILE",
                        help="a ModelNew file and its backend (cuda, triton, pytorch, cpp); repeatable")
    parser.add_argument("--num-correct-trials", type=int, default=5)
    parser.add_argument("--num-perf-trials", type=int, default=100)
    parser.add_argument("--num-warmup", type=int, default=None, help="warm-up calls before timing (server's default)")
    parser.add_argument("--enable-profiling", action="store_true", help="ask for the profile (metadata.profile)")
    parser.add_argument("--poll-s", type=float, default=1.0, help="status polling period (KernelGYM's: 1 s)")
    parser.add_argument("--deadline-s", type=float, default=600.0, help="how long to wait for each result")
    parser.add_argument("--expect-correct", action="store_true", help="exit 1 unless every candidate is correct")
    args = parser.parse_args()

    with open(args.reference) as file:
        reference_code = file.read()
    candidates = []
    for spec in args.candidate:
        backend, sep, path = spec.partition("=")
        if not sep or not path:
            parser.error(f"--candidate '{spec}': expected BACKEND=FILE, e.g. triton=relu_triton.py")
        with open(path) as file:
            candidates.append((backend, path, file.read()))

    # Ids are idempotency keys: two runs of this client must never share one (a time in seconds did).
    run_id = uuid.uuid4().hex[:12]
    try:
        ids = []
        for number, (backend, path, kernel_code) in enumerate(candidates):
            ids.append(submit(args.url, args.token, {
                "task_id": f"kernelgym-client-{run_id}-{number}",
                "reference_code": reference_code, "kernel_code": kernel_code, "backend": backend,
                "entry_point": "Model", "num_correct_trials": args.num_correct_trials,
                "num_perf_trials": args.num_perf_trials, "num_warmup": args.num_warmup,
                "enable_profiling": args.enable_profiling}))
        results = [wait_for_result(args.url, args.token, task_id, args.poll_s, args.deadline_s) for task_id in ids]
    except (OSError, RuntimeError, TimeoutError) as error:
        print(f"kernelgym_client: {error}", file=sys.stderr)
        return 3

    failed = False
    for (backend, path, _), result in zip(candidates, results):
        correct = bool(result.get("compiled")) and bool(result.get("correctness"))
        failed |= args.expect_correct and not correct
        print(f"{backend:8} {path}: compiled={result.get('compiled')} correctness={result.get('correctness')} "
              f"decoy={result.get('decoy_kernel')} speedup={result.get('speedup')} "
              f"kernel_ms={result.get('kernel_runtime')} reference_ms={result.get('reference_runtime')} "
              f"error_code={result.get('error_code')} reward={result.get('reward')} "
              f"processing_s={result.get('processing_time')}")
        profile = (result.get("metadata") or {}).get("profile")
        if args.enable_profiling:
            failed |= profile is None
            print(f"         profile: {json.dumps(profile)[:600]}")
        if not correct:
            print(f"         metadata: {json.dumps(result.get('metadata'))[:800]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
