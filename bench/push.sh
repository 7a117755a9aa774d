#!/usr/bin/env bash
# How long after the initiate does a call's push leave, and does a slow or
# dead push service hold up calls? (issue 13; docs/BENCHMARKS.md, "Push
# latency").
#
# Starts the mock APNs/FCM server (Tests/Push/mock_push.py, HTTP/2 over TLS
# with a fresh test CA and keys) and a release ringd pushing to it, pinned to
# SERVER_CPUS; registers CALLEES offline callees with push tokens (half APNs,
# half FCM) and places RATE calls/s for DURATION seconds from 50 connected
# callers (bench/push_load.py, pinned with the mock to CLIENT_CPUS). One run
# per mode, each printing one JSON line: the initiate's round trip (p50/p99),
# calls, ring pushes that arrived, p50/p99/max of arrival at the mock minus
# the call's initiatedAt, in ms, and ringd's CPU time per call (µs, from
# /proc, over the load and the wait for the last pushes). Modes:
#   none  no push configured (the baseline)
#   ok    the mock answers at once
#   slow  the mock answers every request after 10 s (ringd's timeout)
#   down  ringd pushes to a closed port (every connect is refused)
#
#   bench/push.sh            (make bench-push builds first)
#
# Environment: BIN (.build/release), SERVER_CPUS (1), CLIENT_CPUS (0; empty
# for no pinning), RATE (200), DURATION (10), CALLEES (1000), MODES
# ("none ok slow down").
set -euo pipefail

cd "$(dirname "$0")/.."
bin=${BIN:-.build/release}
server_cpus=${SERVER_CPUS-1}
client_cpus=${CLIENT_CPUS-0}
rate=${RATE:-200}
duration=${DURATION:-10}
callees=${CALLEES:-1000}
python=.venv/bin/python

work=$(mktemp -d "${TMPDIR:-/tmp}/pushbench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

pin() { if [ -n "$1" ]; then echo "taskset -c $1"; fi; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$work/tls-key.pem" -out "$work/tls-cert.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/apns.p8"
chmod 600 "$work/apns.p8"   # ringd refuses a key file others can read
openssl pkey -in "$work/apns.p8" -pubout -out "$work/apns-public.pem"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/fcm.pem" 2>/dev/null
openssl pkey -in "$work/fcm.pem" -pubout -out "$work/fcm-public.pem"

run_mode() {
  local mode=$1 dir="$work/$1" delay=()
  mkdir -p "$dir"
  [ "$mode" = slow ] && delay=(--delay-ms 10000)
  $(pin "$client_cpus") "$python" -I Tests/Push/mock_push.py --cert "$work/tls-cert.pem" --key "$work/tls-key.pem" \
    --apns-public-key "$work/apns-public.pem" --apns-key-id BENCHKEY01 --apns-team-id BENCHTEAM1 \
    --fcm-public-key "$work/fcm-public.pem" --fcm-client-email bench@ringd-bench.iam.gserviceaccount.com \
    --fcm-project ringd-bench --log "$dir/mock.jsonl" "${delay[@]}" > "$dir/mock.out" 2> "$dir/mock.err" &
  local mock=$!
  pids+=($mock)
  for _ in $(seq 100); do grep -q '^listening' "$dir/mock.out" && break; sleep 0.1; done
  local mock_port
  mock_port=$(sed -n 's/^listening //p' "$dir/mock.out")
  [ -n "$mock_port" ] || { echo "the mock did not start: $(cat "$dir/mock.err")" >&2; exit 1; }
  touch "$dir/mock.jsonl"
  local base="https://127.0.0.1:$mock_port"
  if [ "$mode" = down ]; then
    # A port nothing listens on: bind one, note it, close it.
    base="https://127.0.0.1:$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  fi

  "$python" - "$work" "$dir" "$base" "$mode" "https://127.0.0.1:$mock_port" <<'PY'
import json, os, sys
work, dir, base, mode, mock = sys.argv[1:6]
json.dump({"type": "service_account", "project_id": "ringd-bench",
           "client_email": "bench@ringd-bench.iam.gserviceaccount.com",
           "private_key": open(work + "/fcm.pem").read(), "token_uri": base + "/token"},
          open(dir + "/service-account.json", "w"))
os.chmod(dir + "/service-account.json", 0o600)
config = {"listen": {"host": "127.0.0.1", "port": 0}, "store": {"path": dir + "/ringd.sqlite"},
          "limits": {"requestsPerSecond": 100000, "requestBurst": 100000}}
if mode != "none":
    config["push"] = {"apns": {"keyFile": work + "/apns.p8", "keyId": "BENCHKEY01", "teamId": "BENCHTEAM1",
                               "bundleId": "net.ringd.bench", "productionURL": base, "sandboxURL": base},
                      "fcm": {"serviceAccountFile": dir + "/service-account.json", "baseURL": base},
                      "caFile": work + "/tls-cert.pem"}
json.dump(config, open(dir + "/config.json", "w"))
PY

  $(pin "$server_cpus") "$bin/ringd" --config "$dir/config.json" > "$dir/ringd.out" 2> "$dir/ringd.err" &
  local ringd=$!
  pids+=($ringd)
  for _ in $(seq 100); do grep -q '^listening' "$dir/ringd.out" && break; sleep 0.1; done
  local port
  port=$(sed -n 's/^listening ws:\/\/127.0.0.1://p' "$dir/ringd.out" | head -1)
  [ -n "$port" ] || { echo "ringd did not start: $(cat "$dir/ringd.err")" >&2; exit 1; }

  echo "$mode: ringd on $port (CPUs ${server_cpus:-any}); $rate calls/s for $duration s to $callees offline callees" >&2
  local ticks_before ticks_after
  ticks_before=$(awk '{print $14 + $15}' "/proc/$ringd/stat")
  $(pin "$client_cpus") "$python" bench/push_load.py "$port" "$dir/mock.jsonl" "$callees" "$rate" "$duration" "$mode" \
    > "$dir/result.json"
  ticks_after=$(awk '{print $14 + $15}' "/proc/$ringd/stat")
  # ringd's CPU time (user + system) over the run, per call placed.
  "$python" -c 'import json, os, sys
result = json.load(open(sys.argv[1]))
ticks = int(sys.argv[3]) - int(sys.argv[2])
result["serverCpuUsPerCall"] = round(ticks * 1e6 / os.sysconf("SC_CLK_TCK") / max(1, result["calls"]), 1)
print(json.dumps(result))' "$dir/result.json" "$ticks_before" "$ticks_after"
  local violations
  violations=$(grep -c '"violations": \[[^]]' "$dir/mock.jsonl" || true)
  echo "$mode: mock requests with violations: $violations" >&2
  kill "$ringd" "$mock" 2>/dev/null || true
  wait "$ringd" "$mock" 2>/dev/null || true
}

read -r -a modes <<< "${MODES:-none ok slow down}"
for mode in "${modes[@]}"; do run_mode "$mode"; done
