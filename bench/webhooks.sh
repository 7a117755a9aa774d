#!/usr/bin/env bash
# Does a webhook receiver that is slow, dead or refusing change call latency?
# (issue 12; docs/BENCHMARKS.md, "Webhooks and call latency").
#
# Runs `ringbench calls --spawn` against ringd in four modes, alternating,
# ROUNDS times each (the order rotates every round):
#   none    no webhooks configured (the baseline)
#   ok      one endpoint whose receiver answers 200 at once
#   slow    one endpoint whose receiver sleeps 10 s per request (ringd's
#           timeout is 10 s: every attempt times out)
#   refuse  one endpoint on a closed port (every connect is refused)
# The receiver is bench/webhook_receiver.py, pinned with ringbench to the
# client CPUs. After each run it reads the spawned store's webhook_deliveries
# (by status) and prints one JSON line per run, then medians and spreads.
#
#   bench/webhooks.sh [ROUNDS]          (3; make bench-webhooks builds first)
#
# Environment: BIN (.build/release), SERVER_CPUS (1), CLIENT_CPUS (0; empty
# for no pinning), RINGBENCH_ARGS (--pairs 200 --rate 500 --duration 10),
# MODES ("none ok slow refuse"), RESULTS (the file the JSON lines go to; by
# default a new /tmp/whbench-results.*, kept).
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${1:-3}
bin=${BIN:-.build/release}
server_cpus=${SERVER_CPUS-1}
client_cpus=${CLIENT_CPUS-0}
ringbench_args=${RINGBENCH_ARGS:---pairs 200 --rate 500 --duration 10}
read -r -a modes <<< "${MODES:-none ok slow refuse}"
# A fixed test secret (bytes 0..31): the receiver does not verify it.
secret="whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

work=$(mktemp -d "${TMPDIR:-/tmp}/whbench.XXXXXX")
results=${RESULTS:-$(mktemp "${TMPDIR:-/tmp}/whbench-results.XXXXXX")}
receiver_pid=""
cleanup() {
  if [ -n "$receiver_pid" ]; then kill "$receiver_pid" 2>/dev/null || true; wait "$receiver_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

pin=()
[ -n "$server_cpus" ] && pin+=(--server-cpus "$server_cpus")
[ -n "$client_cpus" ] && pin+=(--client-cpus "$client_cpus")
receiver_pin=()
[ -n "$client_cpus" ] && receiver_pin=(taskset -c "$client_cpus")

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each run: $bin/ringbench calls --spawn $bin/ringd ${pin[*]} $ringbench_args --json" \
     "[--server-env RINGD_WEBHOOKS_ENDPOINTS=...] --server-env RINGD_STORE_PATH=..."
: > "$results"

run_one() {
  local mode=$1 round=$2 store="$work/$1-$2" port="" requests="" receiver_cpu="" line
  mkdir -p "$store"
  local env=(--server-env "RINGD_STORE_PATH=$store/ringd.sqlite")
  if [ "$mode" != none ]; then
    : > "$store/receiver.out"  # before the receiver's shell opens it, for the sed below
    "${receiver_pin[@]}" python3 bench/webhook_receiver.py "$mode" >> "$store/receiver.out" &
    receiver_pid=$!
    for _ in $(seq 50); do
      port=$(sed -n 's/^listening //p' "$store/receiver.out" || true)
      [ -n "$port" ] && break
      sleep 0.1
    done
    [ -n "$port" ] || { echo "the receiver ($mode) did not start" >&2; exit 1; }
    env+=(--server-env "RINGD_WEBHOOKS_ENDPOINTS=[{\"url\":\"http://127.0.0.1:$port/ringd\",\"secrets\":[\"$secret\"]}]")
  fi
  # shellcheck disable=SC2086 # ringbench_args is a list of words
  line=$("$bin/ringbench" calls --spawn "$bin/ringd" "${pin[@]}" $ringbench_args --json "${env[@]}") || {
    echo "ringbench failed in mode $mode" >&2; exit 1; }
  if [ -n "$receiver_pid" ]; then
    kill "$receiver_pid"; wait "$receiver_pid" 2>/dev/null || true; receiver_pid=""
    requests=$(sed -n 's/^requests //p' "$store/receiver.out")
    receiver_cpu=$(sed -n 's/^cpu //p' "$store/receiver.out")
  fi
  python3 - "$mode" "$round" "$store/ringd.sqlite" "${requests:-0}" "${receiver_cpu:-0}" "$line" >> "$results" <<'EOF'
import json, sqlite3, sys
mode, round_, path, requests, receiver_cpu, line = sys.argv[1:]
report = json.loads(line)
deliveries = {}
connection = sqlite3.connect(path)
if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'webhook_deliveries'").fetchone():
    for status, count, attempts in connection.execute(
            "SELECT status, count(*), sum(attempts) FROM webhook_deliveries GROUP BY status"):
        deliveries[status] = {"rows": count, "attempts": attempts}
print(json.dumps({"mode": mode, "round": int(round_), "receiverRequests": int(requests),
                  "receiverCpuSeconds": float(receiver_cpu),
                  "deliveries": deliveries, "report": report}))
EOF
  rm -rf "$store"
  tail -n 1 "$results"
}

for round in $(seq "$rounds"); do
  count=${#modes[@]}
  for index in $(seq 0 $((count - 1))); do
    run_one "${modes[$(((index + round - 1) % count))]}" "$round"
  done
done

python3 - "$results" <<'EOF'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
modes = list(dict.fromkeys(run["mode"] for run in runs))
columns = [
    ("ring p99 ms", lambda r: r["report"]["ringMs"]["p99"]),
    ("setup p99 ms", lambda r: r["report"]["setupMs"]["p99"]),
    ("ring p50 ms", lambda r: r["report"]["ringMs"]["p50"]),
    ("server µs/call", lambda r: r["report"].get("serverCpuMicrosPerCall", 0)),
    ("failed", lambda r: r["report"]["failed"]),
    ("pending at end", lambda r: r["deliveries"].get("pending", {}).get("rows", 0)),
    ("delivered", lambda r: r["deliveries"].get("delivered", {}).get("rows", 0)),
    ("attempts", lambda r: sum(d["attempts"] or 0 for d in r["deliveries"].values())),
    ("receiver CPU s", lambda r: r.get("receiverCpuSeconds", 0)),
]
def cell(values):
    median = statistics.median(values)
    fmt = (lambda v: f"{v:g}") if all(float(v).is_integer() for v in values) else (lambda v: f"{v:.2f}")
    return f"{fmt(median)} ({fmt(min(values))}–{fmt(max(values))})"
print()
print("median (min–max) over", ", ".join(f"{sum(r['mode'] == m for r in runs)} {m}" for m in modes), "runs")
print("| mode | " + " | ".join(name for name, _ in columns) + " |")
print("|---|" + "---:|" * len(columns))
for mode in modes:
    chosen = [r for r in runs if r["mode"] == mode]
    print(f"| {mode} | " + " | ".join(cell([get(r) for r in chosen]) for _, get in columns) + " |")
EOF
echo "(runs: $results)"
