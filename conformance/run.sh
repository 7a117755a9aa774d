#!/usr/bin/env bash
# Run the Autobahn|Testsuite fuzzingclient against the ws-echo server.
# Usage: conformance/run.sh [--binary PATH] [--cases all|core|compression|PATTERNS]
#                           [--no-compression] [--out DIR] [--timeout SECS]
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
PY27="${AUTOBAHN_PYTHON27:-/root/.pyenv/versions/2.7.18/bin/python2.7}"
VENV="$ROOT/.build/autobahn-venv"
BOOT="$ROOT/.build/autobahn-bootstrap"
REQS="$HERE/requirements-py27.txt"

usage() {
  cat <<EOF
Usage: $0 [--binary PATH] [--cases all|core|compression|PATTERNS] [--no-compression]
          [--out DIR] [--timeout SECS]
  --binary PATH     ws-echo executable (default: .build/release/ws-echo, else .build/debug/ws-echo)
  --cases MODE      all (default): every case
                    core: every case except 12.*/13.* (permessage-deflate)
                    compression: 12.* and 13.* only
                    or a comma-separated list of case patterns, e.g. '1.*,2.*,7.1.1'
  --no-compression  start ws-echo without --compression (12.*/13.* are then
                    UNIMPLEMENTED, reported as skipped; by default they fail)
  --out DIR         report directory (default: .build/autobahn-reports)
  --timeout SECS    abort wstest after SECS seconds (default: 3600)
EOF
}

BINARY="" CASES="all" OUT="$ROOT/.build/autobahn-reports" TIMEOUT=3600 COMPRESSION=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) BINARY="${2:?--binary needs a path}"; shift 2 ;;
    --cases) CASES="${2:?--cases needs a value}"; shift 2 ;;
    --no-compression) COMPRESSION=0; shift ;;
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --timeout) TIMEOUT="${2:?--timeout needs seconds}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

if [[ -z "$BINARY" ]]; then
  for candidate in "$ROOT/.build/release/ws-echo" "$ROOT/.build/debug/ws-echo"; do
    if [[ -x "$candidate" ]]; then BINARY="$candidate"; break; fi
  done
fi
if [[ -z "$BINARY" || ! -x "$BINARY" ]]; then
  echo "error: ws-echo binary not found or not executable: ${BINARY:-.build/release/ws-echo or .build/debug/ws-echo}" >&2
  echo "       build it with 'swift build -c release' or pass --binary PATH" >&2
  exit 2
fi

# --- Python 2.7 virtualenv with autobahntestsuite (built once, cached) -------
if [[ ! -x "$PY27" ]]; then
  echo "error: Python 2.7 interpreter not found at $PY27." >&2
  echo "       Autobahn|Testsuite needs CPython 2.7: install it with 'pyenv install 2.7.18'" >&2
  echo "       or point AUTOBAHN_PYTHON27 at a python2.7 executable." >&2
  exit 2
fi

REQS_HASH="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [[ ! -x "$VENV/bin/wstest" || "$(cat "$VENV/.reqs-sha256" 2>/dev/null)" != "$REQS_HASH" ]]; then
  echo "==> creating Python 2.7 venv at $VENV"
  rm -rf "$VENV"
  mkdir -p "$ROOT/.build"
  if "$PY27" -m virtualenv --version >/dev/null 2>&1; then
    "$PY27" -m virtualenv -q "$VENV"
  else
    # virtualenv 16.x is the last single-file release that runs on 2.7; install it
    # into a private directory so the pyenv interpreter is left untouched.
    if [[ ! -f "$BOOT/virtualenv.py" ]]; then
      "$PY27" -m pip --version >/dev/null 2>&1 || "$PY27" -m ensurepip
      "$PY27" -m pip install -q --disable-pip-version-check --target "$BOOT" 'virtualenv==16.7.12' \
        2> >(grep -v DEPRECATION >&2)
    fi
    PYTHONPATH="$BOOT" "$PY27" -m virtualenv -q "$VENV"
  fi
  echo "==> installing autobahntestsuite (pins from ${REQS#"$ROOT/"})"
  if ! "$VENV/bin/pip" install --disable-pip-version-check -r "$REQS" >"$VENV/pip-install.log" 2>&1; then
    tail -n 30 "$VENV/pip-install.log" >&2
    echo "error: autobahntestsuite install failed (full log: $VENV/pip-install.log)" >&2
    exit 1
  fi
  echo "$REQS_HASH" > "$VENV/.reqs-sha256"
fi
PY="$VENV/bin/python"
export PYTHONWARNINGS=ignore PYTHONIOENCODING=utf-8

# --- start ws-echo on a free loopback port -----------------------------------
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
SERVER_PID="" WSTEST_PID=""
cleanup() {
  if [[ -n "$WSTEST_PID" ]]; then kill "$WSTEST_PID" 2>/dev/null || true; fi
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SERVER_ARGS=(--host 127.0.0.1 --port "$PORT")
if (( COMPRESSION )); then SERVER_ARGS+=(--compression); fi
echo "==> starting $BINARY ${SERVER_ARGS[*]} (log: $OUT/ws-echo.log)"
"$BINARY" "${SERVER_ARGS[@]}" >"$OUT/ws-echo.log" 2>&1 &
SERVER_PID=$!
deadline=$((SECONDS + 30))
until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "error: ws-echo exited before listening; log:" >&2; cat "$OUT/ws-echo.log" >&2; exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "error: ws-echo did not accept connections on port $PORT within 30s" >&2; exit 1
  fi
  sleep 0.1
done

# --- fuzzingclient spec -------------------------------------------------------
case "$CASES" in
  core) INCLUDE='"*"'; EXCLUDE='"12.*", "13.*"' ;;
  all) INCLUDE='"*"'; EXCLUDE='' ;;
  compression) INCLUDE='"12.*", "13.*"'; EXCLUDE='' ;;
  *) INCLUDE="$(sed -e 's/[^,][^,]*/"&"/g' -e 's/,/, /g' <<<"$CASES")"; EXCLUDE='' ;;
esac
SPEC="$OUT/fuzzingclient.json"
cat >"$SPEC" <<EOF
{
  "options": {"failByDrop": false},
  "outdir": "$OUT",
  "servers": [{"agent": "ws-echo", "url": "ws://127.0.0.1:$PORT", "options": {"version": 18}}],
  "cases": [$INCLUDE],
  "exclude-cases": [$EXCLUDE],
  "exclude-agent-cases": {}
}
EOF

echo "==> wstest -m fuzzingclient -s $SPEC (cases: $CASES; log: $OUT/wstest.log)"
rm -f "$OUT/index.json"
start=$SECONDS
# Run in the background and `wait`, so that INT/TERM reach the trap (and the
# cleanup) at once instead of after wstest finishes.
(cd "$OUT" && exec timeout "$TIMEOUT" "$VENV/bin/wstest" -m fuzzingclient -s "$SPEC") >"$OUT/wstest.log" 2>&1 &
WSTEST_PID=$!
rc=0
wait "$WSTEST_PID" || rc=$?
WSTEST_PID=""
echo "==> wstest finished in $((SECONDS - start))s (exit $rc)"
if (( rc != 0 )); then
  echo "warning: wstest exited with status $rc; last lines of its log:" >&2
  tail -n 20 "$OUT/wstest.log" >&2
fi
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "warning: ws-echo is no longer running (crashed during the run?); see $OUT/ws-echo.log" >&2
fi

status=0
if (( COMPRESSION )); then UNIMPLEMENTED=fail; else UNIMPLEMENTED=skip; fi
"$PY" "$HERE/summarize.py" "$OUT" "$CASES" "$UNIMPLEMENTED" || status=$?
echo "HTML report: $OUT/index.html"
if (( rc != 0 && status == 0 )); then status=1; fi
exit "$status"
