"""Push latency load (issue 13; docs/BENCHMARKS.md, "Push latency").

Places CALLS calls at RATE calls/s from CALLERS connected callers to a
population of offline callees that have push tokens (registered over REST
first, even callees APNs, odd ones FCM). Each caller cancels its call as
soon as the initiate's result arrives, so the callee is free for the next
round. ringd pushes every call from its worker; the mock push server logs
when each request arrived. The latency of a push is that arrival minus the
call's initiatedAt (in the payload), which ringd stamps before the commit:
so it is an upper bound of commit-to-push.

It also reports the initiate's round trip (request to result), which is
what ringing the connected devices waits for: it must not depend on how
the push service fares (MODE: ok, slow, down or none, see bench/push.sh).

    push_load.py PORT MOCK_LOG CALLEES RATE DURATION [MODE]
"""
import asyncio
import json
import sys
import time
import urllib.request

import websockets

API_KEY = "ringd-dev-api-key"
AUTH_KEY = "ringd-dev-auth-key"


def token(index):
    if index % 2 == 0:
        return "apns-voip", "%064x" % (index + 1)
    return "fcm", "bench-fcm-token-%06d-%s" % (index, "x" * 40)


def register(port, callees):
    for index in range(callees):
        platform, value = token(index)
        member = {"platform": platform, "token": value}
        if platform == "apns-voip":
            member["topic"] = "net.ringd.bench"
        body = json.dumps(member).encode()
        request = urllib.request.Request(
            "http://127.0.0.1:%d/v1/users/callee%d/devices/phone/push-token" % (port, index),
            data=body, method="PUT", headers={"X-Api-Key": API_KEY, "Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            assert response.status == 200, response.status


async def caller(port, index, schedule, placed, failures, setup):
    async with websockets.connect("ws://127.0.0.1:%d/v1/ws" % port, max_size=None) as ws:
        await ws.send(json.dumps({"type": "auth", "id": "a", "uid": "caller%d" % index, "authKey": AUTH_KEY}))
        while json.loads(await ws.recv()).get("type") != "result":
            pass
        while True:
            callee = await schedule.get()
            if callee is None:
                return
            sent = time.monotonic()
            await ws.send(json.dumps({"type": "initiateCall", "id": "i", "receiverId": "callee%d" % callee,
                                      "callType": "audio", "timeout": 30}))
            while True:
                frame = json.loads(await ws.recv())
                if frame.get("type") == "result" and frame.get("id") == "i":
                    break
            setup.append((time.monotonic() - sent) * 1000)
            if not frame.get("ok"):
                failures.append(frame)
                continue
            placed.append(frame["data"]["call"]["sessionId"])
            await ws.send(json.dumps({"type": "cancelCall", "id": "c", "sessionId": frame["data"]["call"]["sessionId"]}))
            while True:
                frame = json.loads(await ws.recv())
                if frame.get("type") == "result" and frame.get("id") == "c":
                    break


async def main(port, callees, rate, duration):
    register(port, callees)
    schedule = asyncio.Queue()
    placed, failures, setup = [], [], []
    callers = 50
    tasks = [asyncio.create_task(caller(port, index, schedule, placed, failures, setup)) for index in range(callers)]
    total = int(rate * duration)
    start = time.monotonic()
    for number in range(total):
        delay = start + number / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await schedule.put(number % callees)
    for _ in tasks:
        await schedule.put(None)
    await asyncio.gather(*tasks)
    return placed, failures, setup


def rounded(value):
    return None if value is None else round(value, 2)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else None


if __name__ == "__main__":
    port, log, callees, rate, duration = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    mode = sys.argv[6] if len(sys.argv) > 6 else "ok"
    wait_for_pushes = mode in ("ok", "slow")
    placed, failures, setup = asyncio.run(main(port, callees, rate, duration))
    wanted = set(placed)
    # Wait for the pushes still on their way (not when none can come).
    deadline = time.monotonic() + (10 if wait_for_pushes else 0)
    while True:
        with open(log) as lines:
            entries = [json.loads(line) for line in lines]
        arrived = sum(1 for entry in entries if entry["kind"] == "apns"
                      or (entry.get("body") or {}).get("message", {}).get("data", {}).get("type") == "incoming_call")
        if arrived >= len(wanted) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    latency = {"apns": [], "fcm": []}
    rings = 0
    for entry in entries:
        body = entry.get("body") or {}
        if entry["kind"] == "apns":
            session, initiated = body.get("sessionId"), body.get("initiatedAt")
        elif entry["kind"] == "fcm" and body.get("message", {}).get("data", {}).get("type") == "incoming_call":
            data = body["message"]["data"]
            session, initiated = data.get("sessionId"), int(data.get("initiatedAt"))
        else:
            continue
        if session in wanted:
            rings += 1
            latency[entry["kind"]].append(entry["receivedAt"] - initiated)
    both = latency["apns"] + latency["fcm"]
    print(json.dumps({
        "mode": mode,
        "initiateP50Ms": rounded(percentile(setup, 0.5)), "initiateP99Ms": rounded(percentile(setup, 0.99)),
        "calls": len(placed), "failedInitiates": len(failures), "ringPushes": rings,
        "p50Ms": rounded(percentile(both, 0.5)), "p99Ms": rounded(percentile(both, 0.99)),
        "maxMs": rounded(max(both) if both else None),
        "apnsP99Ms": rounded(percentile(latency["apns"], 0.99)), "fcmP99Ms": rounded(percentile(latency["fcm"], 0.99)),
    }))
