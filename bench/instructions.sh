#!/usr/bin/env bash
# Instructions per call of one or more ringd builds, under
# `valgrind --tool=callgrind` (deterministic, so a shared, noisy machine
# does not move it; docs/BENCHMARKS.md). For each build, ROUNDS times,
# alternating between the builds: ringd on a fresh file store with one loop
# ("threads": 1), driven by ringbench at 20 calls/s over 5 pairs for 1 s
# and then, in a second process, for 10 s; instructions per call are the
# slope between the two runs (the start-up and shutdown, the same in both,
# cancel out).
#
#   bench/instructions.sh RINGBENCH RINGD [RINGD ...]
#
# RINGBENCH is one ringbench binary used for every build (its frames are the
# load). Environment: ROUNDS (2), SHORT (1) and LONG (10): the two runs'
# seconds.
set -euo pipefail
ringbench=$1; shift
rounds=${ROUNDS:-2}; short=${SHORT:-1}; long=${LONG:-10}
command -v valgrind >/dev/null || { echo "valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ringd-instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Total instructions of one ringd process serving `seconds` of load.
measure() {
    local ringd=$1 seconds=$2 dir
    dir=$(mktemp -d "$work/run.XXXXXX")
    cat > "$dir/config.json" <<EOF
{"listen": {"host": "127.0.0.1", "port": 0}, "threads": 1, "logLevel": "warning",
 "store": {"path": "$dir/ringd.sqlite"}}
EOF
    valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
        "$ringd" --config "$dir/config.json" > "$dir/stdout" 2> "$dir/stderr" &
    local pid=$! url="" tries=0
    while [ -z "$url" ] && [ $tries -lt 600 ] && kill -0 $pid 2>/dev/null; do
        sleep 0.1; tries=$((tries + 1)); url=$(sed -n 's/^listening //p' "$dir/stdout")
    done
    [ -n "$url" ] || { echo "ringd did not start:" >&2; cat "$dir/stderr" >&2; exit 1; }
    "$ringbench" calls --server "$url" --pairs 5 --rate 20 --duration "$seconds" > "$dir/bench" 2>&1 ||
        { echo "ringbench failed:" >&2; cat "$dir/bench" >&2; kill $pid; exit 1; }
    kill -TERM $pid; wait $pid || true
    sed -n 's/^totals: \([0-9]*\).*/\1/p' "$dir/callgrind.out"
}

declare -A slopes
for round in $(seq 1 "$rounds"); do
    for ringd in "$@"; do
        a=$(measure "$ringd" "$short"); b=$(measure "$ringd" "$long")
        calls=$(( (long - short) * 20 ))
        slope=$(( (b - a) / calls ))
        slopes[$ringd]="${slopes[$ringd]:-}${slopes[$ringd]:+ · }$slope"
        echo "round $round  $ringd: $slope instructions per call ($a over $((short * 20)) calls, $b over $((long * 20)))"
    done
done
echo
for ringd in "$@"; do echo "$ringd: ${slopes[$ringd]}"; done
