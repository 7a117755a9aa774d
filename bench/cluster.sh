#!/usr/bin/env bash
# make bench-cluster (docs/BENCHMARKS.md, "Cluster on PostgreSQL"): ringd in
# cluster mode on a throw-away PostgreSQL, with one node and then with two.
#
# PostgreSQL comes from Debian's binaries (initdb and pg_ctl from the newest
# /usr/lib/postgresql/*/bin), serving on a Unix socket in a temporary
# directory and on no TCP port, trust auth for user ringd, as `nobody` when
# run as root (PostgreSQL refuses root). fsync is ON by default, as in
# production: every commit waits for its WAL to reach the disk. FSYNC="on off"
# runs everything again on a second server with fsync off (-F), to show what
# the disk costs.
#
# For each fsync setting, with a fresh database for each node count:
#   1 node   callers and callees on the same node;
#   2 nodes  callers on node A, callees on node B (ringbench --callee-server),
#            so ring and teardown latency are the event latency between nodes
#            (a transaction on A, NOTIFY, the listener on B, the callee's socket).
# each, after a WARMUP-second run that is not reported (a new database's and
# new backends' first seconds are slower), a fixed-rate run (RATE calls/s for
# SECONDS s over PAIRS pairs), a --max search (MAX_ARGS) and a run offered
# far more than the setup can take (SATURATE_ARGS: 1000 calls/s over 200
# pairs, each pair with at most one call in flight), whose completed calls/s
# is the setup's throughput whatever its latency, ringbench measuring every
# node's CPU (summed) and the database's (the postmaster and all its
# backends, --db-pid). The --max search's answer rests on a p99 and moves
# with every stall of a shared machine; the saturated throughput moves less. Nothing is pinned: on this 2-CPU machine
# the nodes, PostgreSQL and ringbench share both CPUs. Run it twice or more
# (or ROUNDS=2): the machine is shared.
#
# With PROFILE=1 (the default) a second pass, on the same PostgreSQL
# restarted with pg_stat_statements (planning tracked) and WAL I/O timing,
# runs each setup's saturated load (or, without one, its fixed-rate load)
# once more to show where the time goes, without disturbing the figures
# above: /proc over the middle third of the run gives node A's worker
# thread's round trips to PostgreSQL (its voluntary context switches: it
# sleeps in poll for each answer) and its CPU time, pg_stat_wal how often
# and how long the WAL was flushed,
# and pg_stat_statements how many statements and transactions a call costs
# (counting the run's own connects and disconnects and the nodes'
# maintenance rounds, a few per cent) and how long PostgreSQL plans and
# executes them.
# Ends with a summary table.
#
#   bench/cluster.sh BIN [RATE] [SECONDS] [PAIRS]      (50, 10, 50)
#
# BIN holds ringd and ringbench (release). Environment: FSYNC ("on"; "on off"
# for both), NODES ("1 2"), MAX (1; 0 skips the --max searches), MAX_ARGS
# (--max --pairs 200 --rate 100), SATURATE_ARGS (--pairs 200 --rate 1000
# --duration 10; empty skips the run), WARMUP (3), ROUNDS (1: how many times the
# node counts take turns, for a noisy machine), PROFILE (1; 0 skips the
# profiling pass), PG_BIN (PostgreSQL's bin
# directory), KEEP (1 keeps the temporary directory, with the servers' logs).
set -euo pipefail
bin=$(cd "$1" && pwd); rate=${2:-50}; seconds=${3:-10}; pairs=${4:-50}
warmup=${WARMUP:-3}
read -r -a fsyncs <<< "${FSYNC:-on}"
read -r -a node_counts <<< "${NODES:-1 2}"
max=${MAX:-1}
profile=${PROFILE:-1}
rounds=${ROUNDS:-1}
read -r -a max_args <<< "${MAX_ARGS:---max --pairs 200 --rate 100}"
read -r -a saturate_args <<< "${SATURATE_ARGS---pairs 200 --rate 1000 --duration 10}"
pg_bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$pg_bin/pg_ctl" ] || { echo "bench/cluster.sh: no PostgreSQL (make deps installs postgresql; or set PG_BIN)" >&2; exit 1; }
[ -x "$bin/ringd" ] && [ -x "$bin/ringbench" ] || { echo "bench/cluster.sh: no ringd and ringbench in $bin" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ringd-cluster-bench.XXXXXX")
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(/usr/sbin/runuser -u nobody --); fi
nodes=()
pg_data=""
results="$work/results.jsonl"
cleanup() {
  for pid in "${nodes[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${nodes[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$pg_data" ]; then "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts a PostgreSQL with fsync $1 in $work/pg-$1 (made with initdb the
# first time), with server options $2 added; sets pg_dir and pg_data.
start_postgres() {
  pg_dir="$work/pg-$1"
  if [ ! -d "$pg_dir" ]; then
    mkdir "$pg_dir"
    if [ ${#as_pg[@]} -gt 0 ]; then chown nobody:nogroup "$pg_dir"; fi
    "${as_pg[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U ringd -A trust -E UTF8 >"$pg_dir/initdb.log" 2>&1 \
      || { cat "$pg_dir/initdb.log" >&2; exit 1; }
  fi
  pg_data="$pg_dir/data"
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -w -t 30 -l "$pg_dir/server.log" \
    -o "-k $pg_dir -c listen_addresses='' -c fsync=$1 -c max_connections=50 ${2:-}" start >/dev/null \
    || { cat "$pg_dir/server.log" >&2; exit 1; }
}

stop_postgres() {
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null
  pg_data=""
}

psql_value() { "$pg_bin/psql" -h "$pg_dir" -U ringd -d "$1" -XAtqc "$2"; }

# Starts node $2 (a name) on database $1; appends its pid to nodes and sets port.
start_node() {
  local dir="$work/$2"
  mkdir "$dir"
  echo '{}' > "$dir/config.json"
  : > "$dir/ringd.out"
  # None of the caller's RINGD_ settings: the defaults, and these.
  env $(env | sed -n 's/^\(RINGD_[^=]*\)=.*/-u \1/p') \
    RINGD_STORE_BACKEND=postgres RINGD_STORE_URL="host=$pg_dir user=ringd dbname=$1" \
    RINGD_STORE_PATH="$dir/ringd.sqlite" RINGD_LISTEN_PORT=0 RINGD_LOG_LEVEL=warning \
    RINGD_LIMITS_REQUESTS_PER_SECOND=100000 RINGD_LIMITS_REQUEST_BURST=100000 \
    RINGD_LIMITS_CONNECTIONS_PER_ADDRESS=10000000 RINGD_LIMITS_MAX_UNAUTHENTICATED_CONNECTIONS=10000000 \
    "$bin/ringd" --config "$dir/config.json" > "$dir/ringd.out" 2> "$dir/ringd.log" &
  nodes+=($!)
  port=""
  for _ in $(seq 150); do
    port=$(sed -n 's/^listening ws:\/\/127.0.0.1://p' "$dir/ringd.out" | head -1)
    [ -n "$port" ] && break
    kill -0 "${nodes[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "ringd $2 did not start: $(cat "$dir/ringd.log")" >&2; exit 1; }
}

stop_nodes() {
  for pid in "${nodes[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${nodes[@]}"; do wait "$pid" 2>/dev/null || true; done
  nodes=()
}


# Starts setup $2 nodes on a new database for fsync $1 (its name suffixed
# $3); sets db, pids, target (ringbench's server options) and label.
start_setup() {
  local fsync=$1 count=$2 urls=() i
  db="ringd_${count}nodes${3:-}"
  pids=()
  psql_value postgres "CREATE DATABASE $db" >/dev/null
  for i in $(seq "$count"); do
    start_node "$db" "fsync-$fsync-nodes-$count-$i${3:-}"
    urls+=("ws://127.0.0.1:$port")
    pids+=("${nodes[-1]}")
  done
  target=(--server "${urls[0]}")
  [ "$count" -ge 2 ] && target+=(--callee-server "${urls[1]}")
  for pid in "${pids[@]}"; do target+=(--server-pid "$pid"); done
  target+=(--db-pid "$(head -1 "$pg_data/postmaster.pid")")
  label="fsync $fsync, $count node$([ "$count" -ge 2 ] && echo "s: callers on A, callees on B" || true)"
  "$bin/ringbench" calls "${target[@]}" --pairs "$pairs" --rate "$rate" --duration "$warmup" --json > /dev/null \
    || echo "(the warm-up run failed)" >&2
}

# One setup: fsync $1, $2 nodes, round $3.
run_setup() {
  local db pids target label
  start_setup "$1" "$2" "_$3"
  [ "$rounds" -gt 1 ] && label="$label (round $3)"
  echo
  echo "== $label: ringbench calls ${target[*]} --pairs $pairs --rate $rate --duration $seconds"
  "$bin/ringbench" calls "${target[@]}" --pairs "$pairs" --rate "$rate" --duration "$seconds" --json > "$work/fixed.json"
  python3 - "$work/fixed.json" "$label" "$results" <<'PY'
import json, sys
path, label, results = sys.argv[1:4]
r = json.load(open(path))
r.update(label=label, kind="fixed", load=float(open("/proc/loadavg").read().split()[0]))
pct = lambda s: "/".join(f"{r[s][k]:.1f}" for k in ("p50", "p90", "p99", "max"))
each = r.get("serverCpuMicrosPerCallByProcess")
print(f"calls      {r['completed']} completed, {r['failed']} failed{' ' + str(r['failures']) if r['failures'] else ''}, {r['missedSlots']} missed slots: "
      f"{r['callsPerSecond']} calls/s")
print(f"latency    ms p50/p90/p99/max: ring {pct('ringMs')}, setup {pct('setupMs')}, teardown {pct('teardownMs')}")
print(f"server     {r['serverCpuMicrosPerCall']} µs CPU per call" + (f" (A {each[0]} + B {each[1]})" if each else ""))
print(f"database   {r['databaseCpuMicrosPerCall']} µs CPU per call ({r['databaseProcesses']} processes)")
print(f"client     {r['clientCpuPercent']} % of one CPU")
open(results, "a").write(json.dumps(r) + "\n")
PY

  if [ "$max" = 1 ]; then
    echo
    echo "== $label: ringbench calls ${target[*]} ${max_args[*]}"
    "$bin/ringbench" calls "${target[@]}" "${max_args[@]}" --json > "$work/max.json" || true
    python3 - "$work/max.json" "$label" "$results" <<'PY'
import json, sys
path, label, results = sys.argv[1:4]
r = json.load(open(path))
for i, s in enumerate(r["steps"], 1):
    print(f"step {i:2}  {s['rate']:7.0f}/s offered {s['callsPerSecond']:8.1f}/s completed  failed {s['failed']:4}"
          f"  missed {s['missedSlots']:5}  setup p99 {s['setupMs']['p99']:8.1f} ms  server {s.get('serverCpuMicrosPerCall', 0):6.1f}"
          f"  db {s.get('databaseCpuMicrosPerCall', 0):6.1f} µs/call  {'pass' if s['passed'] else 'fail'}")
best = r["steps"][r["maxStep"] - 1] if r["maxStep"] else None
if best:
    ring = "/".join(f"{best['ringMs'][k]:.1f}" for k in ("p50", "p90", "p99", "max"))
    print(f"max        {r['maxRate']:.0f} calls/s (ring p50/p90/p99/max {ring} ms; server {best['serverCpuMicrosPerCall']}, "
          f"database {best['databaseCpuMicrosPerCall']} µs CPU per call)" + (" limited by pairs" if r["limitedByPairs"] else ""))
else:
    print("max        none: no step passed")
open(results, "a").write(json.dumps({"label": label, "kind": "max", "maxRate": r["maxRate"],
                                     "best": best, "half": r["half"]}) + "\n")
PY
  fi

  if [ ${#saturate_args[@]} -gt 0 ]; then
    echo
    echo "== $label, offered more than it takes: ringbench calls ${target[*]} ${saturate_args[*]}"
    "$bin/ringbench" calls "${target[@]}" "${saturate_args[@]}" --json > "$work/saturated.json" || true
    python3 - "$work/saturated.json" "$label" "$results" <<'PY'
import json, sys
path, label, results = sys.argv[1:4]
r = json.load(open(path))
r.update(label=label, kind="saturated")
print(f"calls      {r['completed']} completed ({r['callsPerSecond']} calls/s), {r['failed']} failed{' ' + str(r['failures']) if r['failures'] else ''}, "
      f"{r['missedSlots']} missed slots; setup p50 {r['setupMs']['p50']:.0f} ms; server {r.get('serverCpuMicrosPerCall')}, "
      f"database {r.get('databaseCpuMicrosPerCall')} µs CPU per call")
open(results, "a").write(json.dumps(r) + "\n")
PY
  fi
  stop_nodes
}

# The time, then each thread of process $1: its id, utime + stime in clock
# ticks, and its voluntary context switches.
thread_sample() {
  date +%s.%N
  local task
  for task in /proc/"$1"/task/*; do
    echo "${task##*/} $(awk '{print $14 + $15}' "$task/stat") $(awk '/^voluntary_ctxt_switches/ {print $2}' "$task/status")"
  done
}

# The profiling run of setup fsync $1, $2 nodes (see the top).
profile_setup() {
  local db pids target label trace_seconds load=() load_seconds=$seconds i
  # The saturated load when there is one (node A's worker never idle), else the fixed rate.
  if [ ${#saturate_args[@]} -gt 0 ]; then load=("${saturate_args[@]}"); else load=(--pairs "$pairs" --rate "$rate" --duration "$seconds"); fi
  for i in "${!load[@]}"; do [ "${load[$i]}" = --duration ] && load_seconds=${load[$((i + 1))]}; done
  start_setup "$1" "$2" _profile
  trace_seconds=$(python3 -c "print(round($load_seconds / 3, 1))")
  echo
  echo "== profile, $label: ringbench calls … ${load[*]} again, node A sampled for $trace_seconds s"
  sleep 1.2
  psql_value "$db" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" >/dev/null
  psql_value "$db" "SELECT pg_stat_reset_shared('wal')" >/dev/null
  local started ended
  started=$(date +%s.%N)
  "$bin/ringbench" calls "${target[@]}" "${load[@]}" --json > "$work/profile.json" &
  local bench=$!
  sleep "$(python3 -c "print($load_seconds / 3)")"
  thread_sample "${pids[0]}" > "$work/threads-before.txt"
  sleep "$trace_seconds"
  thread_sample "${pids[0]}" > "$work/threads-after.txt"
  wait "$bench"
  ended=$(date +%s.%N)
  sleep 1.2
  psql_value "$db" "SELECT sum(calls), sum(total_plan_time), sum(total_exec_time), sum(calls) FILTER (WHERE query = 'BEGIN')
                    FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'" > "$work/statements.txt"
  psql_value "$db" "SELECT wal_sync, wal_sync_time FROM pg_stat_wal" > "$work/wal.txt"
  python3 - "$work/profile.json" "$work/statements.txt" "$work/threads-before.txt" "$work/threads-after.txt" \
    "$label" "$results" "$work/wal.txt" "$started" "$ended" "$(getconf CLK_TCK)" <<'PY'
import json, re, sys
bench, statements, before, after, label, results, wal, started, ended, tick = sys.argv[1:11]
r = json.load(open(bench))
calls = max(1, r["completed"])
count, plan, execute, begins = (float(x or 0) for x in open(statements).read().strip().split("|"))
syncs, sync_ms = (float(x or 0) for x in open(wal).read().strip().split("|"))
wall_ms = (float(ended) - float(started)) * 1000
print(f"calls      {r['completed']} completed, {r['failed']} failed, {r['callsPerSecond']} calls/s "
      f"(ring p50/p99 {r['ringMs']['p50']:.1f}/{r['ringMs']['p99']:.1f} ms)")
print(f"postgres   {count / calls:.1f} statements per call, {begins / calls:.2f} BEGIN ... COMMIT per call; "
      f"planning {plan * 1000 / count:.0f} µs + executing {execute * 1000 / count:.0f} µs per statement on average "
      f"({(plan + execute) * 1000 / calls:.0f} µs per call; a COMMIT's wait for its WAL flush is not in it)")
print(f"wal        {syncs / calls:.2f} WAL flushes (fdatasync) per call, {sync_ms / max(1, syncs):.2f} ms each; "
      f"flushing {100 * sync_ms / wall_ms:.0f} % of the run's {wall_ms / 1000:.1f} s (pg_stat_wal, track_wal_io_timing)")
profile = {"label": label, "kind": "profile", "callsPerSecond": r["callsPerSecond"],
           "statementsPerCall": round(count / calls, 1), "transactionsPerCall": round(begins / calls, 2),
           "planMicrosPerStatement": round(plan * 1000 / count, 1), "execMicrosPerStatement": round(execute * 1000 / count, 1),
           "walFlushesPerCall": round(syncs / calls, 2), "walFlushMs": round(sync_ms / max(1, syncs), 2),
           "walFlushingPercent": round(100 * sync_ms / wall_ms)}
# Node A's threads over the middle third of the run: the worker is the one
# that sleeps most often, once per round trip (poll waits for each answer).
def sample(path):
    lines = open(path).read().split()
    return float(lines[0]), {int(t): (float(c), int(v)) for t, c, v in zip(lines[1::3], lines[2::3], lines[3::3])}
t0, first = sample(before)
t1, last = sample(after)
window = t1 - t0
deltas = {t: (last[t][0] - first[t][0], last[t][1] - first[t][1]) for t in last if t in first}
ticks, switches = max(deltas.values(), key=lambda d: d[1])
cpu = ticks / float(tick) / window
window_calls = float(r["callsPerSecond"]) * window
print(f"worker     node A's worker thread over {window:.1f} s (/proc: its CPU time and its voluntary context switches, "
      f"one per round trip): {switches / window_calls:.1f} round trips per call ({switches / window:.0f}/s), "
      f"{window * 1e6 / max(1, switches):.0f} µs each, of which {ticks / float(tick) * 1e6 / max(1, switches):.0f} µs on its CPU; "
      f"on a CPU {100 * cpu:.0f} % of the time, off it {100 * (1 - cpu):.0f} % (waiting for PostgreSQL, or for work)")
profile.update(roundTripsPerCall=round(switches / window_calls, 1), roundTripsPerSecond=round(switches / window),
               roundTripMicros=round(window * 1e6 / max(1, switches)),
               workerCpuMicrosPerRoundTrip=round(ticks / float(tick) * 1e6 / max(1, switches)),
               workerOnCpuPercent=round(100 * cpu))
open(results, "a").write(json.dumps(profile) + "\n")
PY
  stop_nodes
}

echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}')"
for fsync in "${fsyncs[@]}"; do
  start_postgres "$fsync"
  for round in $(seq "$rounds"); do
    for count in "${node_counts[@]}"; do run_setup "$fsync" "$count" "$round"; done
  done
  stop_postgres
  if [ "$profile" = 1 ]; then
    start_postgres "$fsync" "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on -c track_wal_io_timing=on"
    for count in "${node_counts[@]}"; do profile_setup "$fsync" "$count"; done
    stop_postgres
  fi
done

echo
echo "== summary ($rate calls/s offered for $seconds s over $pairs pairs; max: ${max_args[*]}; sat: ${saturate_args[*]}; load: the 1-minute load average after the fixed-rate run)"
python3 - "$results" <<'PY'
import json, re, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
maxes = {r["label"]: r for r in rows if r["kind"] == "max"}
saturated = {r["label"]: r for r in rows if r["kind"] == "saturated"}
profiles = {r["label"]: r for r in rows if r["kind"] == "profile"}
print(f"{'setup':<56} {'calls/s':>7} {'failed':>6} {'ring p50/p99 ms':>15} {'server µs':>9} {'db µs':>7}"
      f" {'max/s':>6} {'sat/s':>6} {'stmts/call':>10} {'A trips/call':>12} {'A µs/trip':>9} {'A on CPU':>8} {'WAL busy':>8} {'load':>5}")
for r in (r for r in rows if r["kind"] == "fixed"):
    label = r["label"]
    m, p = maxes.get(label), profiles.get(re.sub(r" \(round \d+\)$", "", label), {})
    ring = f"{r['ringMs']['p50']:.1f}/{r['ringMs']['p99']:.1f}"
    best = f"{m['maxRate']:.0f}" if m and m["maxRate"] else "-"
    sat = f"{saturated[label]['callsPerSecond']:.0f}" if label in saturated else "-"
    trips = p.get("roundTripsPerCall", "-")
    micros = p.get("roundTripMicros", "-")
    oncpu = f"{p['workerOnCpuPercent']} %" if "workerOnCpuPercent" in p else "-"
    print(f"{label:<56} {r['callsPerSecond']:7.1f} {r['failed']:6} {ring:>15} {r['serverCpuMicrosPerCall']:9.1f}"
          f" {r['databaseCpuMicrosPerCall']:7.1f} {best:>6} {sat:>6} {p.get('statementsPerCall', '-'):>10} {trips:>12} {micros:>9} {oncpu:>8} {str(p.get('walFlushingPercent', '-')) + ' %':>8} {r['load']:5.1f}")
PY
