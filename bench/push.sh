#!/usr/bin/env bash
# How long after the initiate does a call's push leave? (issue 13;
# docs/BENCHMARKS.md, "Push latency").
#
# Starts the mock APNs/FCM server (Tests/Push/mock_push.py, HTTP/2 over TLS
# with a fresh test CA and keys) and a release ringd pushing to it, pinned to
# SERVER_CPUS; registers CALLEES offline callees with push tokens (half APNs,
# half FCM) and places RATE calls/s for DURATION seconds from 50 connected
# callers (bench/push_load.py, pinned with the mock to CLIENT_CPUS). Prints
# one JSON line: calls, ring pushes that arrived, p50/p99/max of arrival at
# the mock minus the call's initiatedAt, in ms.
#
#   bench/push.sh            (make bench-push builds first)
#
# Environment: BIN (.build/release), SERVER_CPUS (1), CLIENT_CPUS (0; empty
# for no pinning), RATE (200), DURATION (10), CALLEES (1000).
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
openssl pkey -in "$work/apns.p8" -pubout -out "$work/apns-public.pem"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/fcm.pem" 2>/dev/null
openssl pkey -in "$work/fcm.pem" -pubout -out "$work/fcm-public.pem"

$(pin "$client_cpus") "$python" -I Tests/Push/mock_push.py --cert "$work/tls-cert.pem" --key "$work/tls-key.pem" \
  --apns-public-key "$work/apns-public.pem" --apns-key-id BENCHKEY01 --apns-team-id BENCHTEAM1 \
  --fcm-public-key "$work/fcm-public.pem" --fcm-client-email bench@ringd-bench.iam.gserviceaccount.com \
  --fcm-project ringd-bench --log "$work/mock.jsonl" > "$work/mock.out" 2> "$work/mock.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening' "$work/mock.out" && break; sleep 0.1; done
mock_port=$(sed -n 's/^listening //p' "$work/mock.out")
[ -n "$mock_port" ] || { echo "the mock did not start: $(cat "$work/mock.err")" >&2; exit 1; }
base="https://127.0.0.1:$mock_port"

"$python" - "$work" "$base" <<'PY'
import json, sys
work, base = sys.argv[1], sys.argv[2]
json.dump({"type": "service_account", "project_id": "ringd-bench",
           "client_email": "bench@ringd-bench.iam.gserviceaccount.com",
           "private_key": open(work + "/fcm.pem").read(), "token_uri": base + "/token"},
          open(work + "/service-account.json", "w"))
json.dump({"listen": {"host": "127.0.0.1", "port": 0}, "store": {"path": work + "/ringd.sqlite"},
           "limits": {"requestsPerSecond": 100000, "requestBurst": 100000},
           "push": {"apns": {"keyFile": work + "/apns.p8", "keyId": "BENCHKEY01", "teamId": "BENCHTEAM1",
                             "bundleId": "net.ringd.bench", "productionURL": base, "sandboxURL": base},
                    "fcm": {"serviceAccountFile": work + "/service-account.json", "baseURL": base},
                    "caFile": work + "/tls-cert.pem"}},
          open(work + "/config.json", "w"))
PY

$(pin "$server_cpus") "$bin/ringd" --config "$work/config.json" > "$work/ringd.out" 2> "$work/ringd.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening' "$work/ringd.out" && break; sleep 0.1; done
port=$(sed -n 's/^listening ws:\/\/127.0.0.1://p' "$work/ringd.out" | head -1)
[ -n "$port" ] || { echo "ringd did not start: $(cat "$work/ringd.err")" >&2; exit 1; }

echo "ringd on $port (CPUs ${server_cpus:-any}), mock on $mock_port; $rate calls/s for $duration s to $callees offline callees" >&2
$(pin "$client_cpus") "$python" bench/push_load.py "$port" "$work/mock.jsonl" "$callees" "$rate" "$duration"
violations=$(grep -c '"violations": \[[^]]' "$work/mock.jsonl" || true)
echo "mock requests with violations: $violations" >&2
