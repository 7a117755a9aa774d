#!/usr/bin/env python3
"""How long a 45 s ring timeout takes on the test API's manual clock, in
wall time (docs/BENCHMARKS.md, "Test API: ring timeouts on the manual
clock").

Starts one `ringd --ephemeral` with the test API on, connects alice and
bob, and RUNS times: resets the server, switches to the manual clock,
alice calls bob, bob hears it ring, the clock is advanced 45,000 ms, and
both hear `unanswered`. Times each run from the initiate to the second
`unanswered` (the advance included), then prints min, median, p95, max.

    .venv/bin/python bench/manual_clock.py [BINARY] [RUNS]    (.build/release/ringd, 50)
"""
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
import urllib.request

import websockets

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/ringd")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
key = secrets.token_hex(16)
environment = {k: v for k, v in os.environ.items() if not k.startswith("RINGD_")}
environment.update(RINGD_TESTING_ENABLED="true", RINGD_TESTING_KEY=key)
process = subprocess.Popen([binary, "--ephemeral"], env=environment, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
address = process.stdout.readline().split("ws://", 1)[1].strip()


def api(path, body=None):
    request = urllib.request.Request(f"http://{address}{path}", method="POST",
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"X-Test-Key": key})
    urllib.request.urlopen(request, timeout=30).read()


async def device(uid):
    ws = await websockets.connect(f"ws://{address}/v1/ws")
    await ws.send(json.dumps({"type": "auth", "id": "a", "uid": uid, "authKey": "ringd-dev-auth-key",
                              "deviceId": uid + "-1"}))
    await ws.recv()
    return ws


async def until(ws, status):
    while True:
        frame = json.loads(await ws.recv())
        if frame["type"] == "call" and frame["call"]["status"] == status:
            return


async def one_run():
    api("/v1/test/reset")
    alice, bob = await device("alice"), await device("bob")
    api("/v1/test/clock", {"mode": "manual"})
    started = time.monotonic()
    await alice.send(json.dumps({"type": "initiateCall", "id": "1", "receiverId": "bob", "callType": "audio"}))
    await until(bob, "initiated")
    await asyncio.to_thread(api, "/v1/test/clock/advance", {"ms": 45000})
    await until(alice, "unanswered")
    await until(bob, "unanswered")
    elapsed = time.monotonic() - started
    await alice.close()
    await bob.close()
    return elapsed * 1000


async def main():
    return [await one_run() for _ in range(runs)]


try:
    times = asyncio.run(main())
finally:
    process.terminate()
    process.wait(timeout=10)
ordered = sorted(times)
p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
print(f"{runs} ring timeouts of 45 s on the manual clock: min {ordered[0]:.1f} ms, "
      f"median {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms")
