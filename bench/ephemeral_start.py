#!/usr/bin/env python3
"""How long `ringd --ephemeral` takes from process start to its readiness
line (docs/BENCHMARKS.md, "Ephemeral start-up").

Starts the binary RUNS times, one after the other, each from a fresh empty
directory with no RINGD_ variable set, times posix_spawn to the moment
`listening ws://HOST:PORT` can be read from its stdout, then stops it with
SIGTERM and waits for it. Prints each run in milliseconds, then min, median,
p95 and max.

    bench/ephemeral_start.py [BINARY] [RUNS]    (.build/release/ringd, 20)
"""
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/ringd")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
environment = {key: value for key, value in os.environ.items() if not key.startswith("RINGD_")}


def one_start():
    with tempfile.TemporaryDirectory(prefix="ringd-start-") as directory:
        started = time.monotonic()
        process = subprocess.Popen([binary, "--ephemeral"], cwd=directory, env=environment,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        seen = b""
        try:
            while b"listening " not in seen or not seen.endswith(b"\n"):
                ready, _, _ = select.select([process.stdout], [], [], 10)
                chunk = os.read(process.stdout.fileno(), 4096) if ready else b""
                if not chunk:
                    raise SystemExit(f"no readiness line; got {seen!r}")
                seen += chunk
            elapsed = time.monotonic() - started
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)
        if os.listdir(directory):
            raise SystemExit(f"ringd --ephemeral left {os.listdir(directory)} in its directory")
        return elapsed * 1000


times = [one_start() for _ in range(runs)]
for index, value in enumerate(times, 1):
    print(f"run {index:2}: {value:6.1f} ms")
ordered = sorted(times)
p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
print(f"{runs} starts: min {ordered[0]:.1f} ms, median {statistics.median(ordered):.1f} ms, "
      f"p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms")
