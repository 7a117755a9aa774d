#!/usr/bin/env bash
# make bench-peer (docs/BENCHMARKS.md, "Beside Kamailio"): the Kamailio
# peer (../shared/peers/kamailio: registrar + stateful proxy + dialog, SIPp
# over TCP, INVITE -> 100 -> 180 -> 200 -> ACK -> BYE -> 200) and then
# ringbench calls at the same rate for the same time, each server pinned
# to CPU 1 and its load generator to CPU 0, one after the other in one
# run; prints both servers' CPU per call and ringd's as a ratio of
# Kamailio's. Run twice or more: the machine is shared and noisy.
#
#   bench/peer.sh BIN [RATE] [SECONDS] [PAIRS]    (2000, 10, 200)
#
# BIN holds ringd and ringbench (release). PEER_DIR names the peer's
# directory.
set -eu
bin=$1; rate=${2:-2000}; seconds=${3:-10}; pairs=${4:-200}
here=$(cd "$(dirname "$0")" && pwd)
peer=${PEER_DIR:-$here/../../shared/peers/kamailio}
[ -x "$peer/run.sh" ] || { echo "bench/peer.sh: no Kamailio peer at $peer (set PEER_DIR)" >&2; exit 1; }

echo "== Kamailio: $peer/run.sh $rate $seconds t1"
kamailio=$("$peer/run.sh" "$rate" "$seconds" t1)
echo "$kamailio"

echo "== ringd: ringbench calls --spawn $bin/ringd --server-cpus 1 --client-cpus 0 --server-env RINGD_THREADS=1 --pairs $pairs --rate $rate --duration $seconds"
ringd=$("$bin/ringbench" calls --spawn "$bin/ringd" --server-cpus 1 --client-cpus 0 --server-env RINGD_THREADS=1 \
        --pairs "$pairs" --rate "$rate" --duration "$seconds" --json)
echo "$ringd"

python3 - "$kamailio" "$ringd" <<'PY'
import json, re, sys
kamailio, ringd = sys.argv[1], json.loads(sys.argv[2])
fields = dict(re.findall(r"(\w+)=(\S+)", kamailio))
k, r = float(fields["server_us_per_call"]), float(ringd["serverCpuMicrosPerCall"])
print(f"== at {fields['rate']} calls/s: Kamailio {k:.0f} µs CPU per call ({fields['ok']} ok, {fields['fail']} failed), "
      f"ringd {r:.0f} µs ({ringd['completed']} completed, {ringd['failed']} failed); ringd / Kamailio = {r / k:.2f}")
PY
