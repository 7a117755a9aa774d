"""A bounded property-based run of docs/openapi.yaml against a live ringd.

Starts `ringd --ephemeral` (RINGD, else the repository's .build/debug/ringd) on
a free loopback port (RINGD_LISTEN_PORT=0, its `listening ws://…` line says
which), with a LiveKit key so that the media-token route answers as it does
when configured, and the test API on with a key of its own. Then:

1. Seeds it over the WebSocket: alice calls bob, who accepts, relays a signal
   and hangs up; alice calls again and bob declines with a reason; alice calls
   a third time and bob accepts (left ongoing); bob registers a push token.
   Every frame the server sends meanwhile must validate against its message
   in docs/asyncapi.yaml.
2. Probes what Schemathesis leaves out: /v1/ws's refusals (426, 401, 400)
   and the test API's answers, each checked against docs/openapi.yaml.
3. Runs Schemathesis on every operation but the test API's and the
   WebSocket's, with the development API key: the documented examples (uid
   `alice`…) reach the seeded data, GET /v1/calls/{sessionId} asks for the
   declined call and the media-token route for the ongoing one. Each response
   must be no 5xx, with a status, content type, headers and body the
   document allows, and data the document says is invalid must be refused.

Deterministic (a fixed seed), one worker, a few hundred cases, loopback only.
Nothing is written into the tree: Schemathesis runs in a temporary directory.

Usage: python fuzz_rest.py [--max-examples N] [--seed N]
"""

import argparse
import json
import os
import re
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
from http.client import HTTPConnection
from pathlib import Path

from websockets.sync.client import connect

from check_documents import RESULT_OF, Documents, first_error

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "ringd-dev-api-key"
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
]


def ringd_executable():
    given = os.environ.get("RINGD")
    if given:
        return given
    return str(ROOT / ".build" / "debug" / "ringd")


def start_ringd(test_key):
    # ringd refuses RINGD_ variables it does not know: pass on none but ours.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RINGD")}
    env.update(
        RINGD_LISTEN_PORT="0",
        RINGD_TESTING_ENABLED="true",
        RINGD_TESTING_KEY=test_key,
        RINGD_MEDIA_LIVEKIT_URL="wss://media.invalid",
        RINGD_MEDIA_LIVEKIT_API_KEY="APIcontract",
        RINGD_MEDIA_LIVEKIT_API_SECRET="contract-test-secret-of-32-bytes-or-more",
    )
    process = subprocess.Popen([ringd_executable(), "--ephemeral"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    ready, _, _ = select.select([process.stdout], [], [], 10)
    line = process.stdout.readline() if ready else ""
    match = re.match(r"listening ws://(127\.0\.0\.1:\d+)$", line.strip())
    if not match:
        process.kill()
        raise SystemExit(f"ringd did not start: {line!r}")
    return process, match.group(1)


class Device:
    """One device on ringd's WebSocket whose every received frame is checked against docs/asyncapi.yaml."""

    def __init__(self, docs, address, uid, device_id, problems):
        self.docs, self.uid, self.problems, self.count = docs, uid, problems, 0
        self.socket = connect(f"ws://{address}/v1/ws", open_timeout=5)
        self.pending = {}
        self.request("auth", uid=uid, authKey="ringd-dev-auth-key", deviceId=device_id)

    def check(self, frame):
        self.count += 1
        if frame["type"] == "result":
            name = "errorResult" if not frame["ok"] else RESULT_OF[self.pending.get(frame["id"], "auth")]
        else:
            name = {"call": "callEvent", "signal": "peerSignal"}[frame["type"]]
        error = first_error(self.docs.message_validator(name), frame)
        if error:
            self.problems.append(f"{self.uid} got a frame that breaks {name} {error}: {json.dumps(frame)[:300]}")

    def receive(self, kind):
        """Frames until one of type `kind` (checking each); that one."""
        while True:
            frame = json.loads(self.socket.recv(timeout=5))
            self.check(frame)
            if frame["type"] == kind:
                return frame

    def refused(self, kind, **parameters):
        """Sends a request that must fail; its error result."""
        request_id = str(len(self.pending) + 1)
        self.pending[request_id] = kind
        self.socket.send(json.dumps({"type": kind, "id": request_id, **parameters}))
        while True:
            result = self.receive("result")
            if result["id"] == request_id:
                if result["ok"]:
                    raise SystemExit(f"seeding: {kind} did not fail: {result}")
                return result["error"]

    def request(self, kind, **parameters):
        request_id = str(len(self.pending) + 1)
        self.pending[request_id] = kind
        frame = {"type": kind, "id": request_id, **parameters}
        error = first_error(self.docs.message_validator(kind), frame)
        if error:
            self.problems.append(f"the seeding sent a {kind} that breaks its message {error}")
        self.socket.send(json.dumps(frame))
        while True:
            result = self.receive("result")
            if result["id"] == request_id:
                if not result["ok"]:
                    raise SystemExit(f"seeding: {kind} failed: {result}")
                return result["data"]


def seed(docs, address):
    """Calls and a push token for alice and bob; the ids Schemathesis asks for, and the devices (kept open)."""
    problems = []
    alice = Device(docs, address, "alice", "laptop", problems)
    bob = Device(docs, address, "bob", "phone", problems)
    call = alice.request("initiateCall", receiverId="bob", callType="video", timeout=30,
                         metadata={"topic": "standup"})["call"]
    bob.receive("call")
    bob.request("acceptCall", sessionId=call["sessionId"])
    alice.receive("call")
    alice.request("signal", sessionId=call["sessionId"], payload={"kind": "offer", "sdp": "v=0"})
    bob.receive("signal")
    bob.request("getMediaToken", sessionId=call["sessionId"])
    bob.request("getIceServers")
    alice.request("endCall", sessionId=call["sessionId"])
    bob.receive("call")
    declined = alice.request("initiateCall", receiverId="bob", callType="audio", timeoutMs=30000)["call"]
    bob.receive("call")
    bob.request("ringing", sessionId=declined["sessionId"])
    alice.receive("call")
    bob.request("rejectCall", sessionId=declined["sessionId"], reason="Can't talk, in a meeting")
    alice.receive("call")
    ongoing = alice.request("initiateCall", receiverId="bob", callType="audio")["call"]
    bob.receive("call")
    bob.request("acceptCall", sessionId=ongoing["sessionId"])
    alice.receive("call")
    bob.request("registerPushToken", platform="fcm", token="dQw4w9WgXcQ:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx")
    bob.request("getCallLogs", limit=2)
    alice.request("getActiveCall")
    alice.refused("acceptCall", sessionId="0" * 32)
    alice.refused("initiateCall", receiverId="bob", callType="audio", timeout=30, timeoutMs=30000)
    alice.socket.send("not JSON")
    alice.receive("result")
    frames = alice.count + bob.count
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"seeded: {frames} frames from the server, {len(problems)} breaking docs/asyncapi.yaml", flush=True)
    return declined["sessionId"], ongoing["sessionId"], [alice, bob], not problems


def probe(docs, address, test_key):
    """The routes Schemathesis leaves out (the WebSocket's refusals, the test API), each answer checked."""
    problems = []
    token = json.loads(http(address, "POST", "/v1/users/carol/tokens", {"X-Api-Key": API_KEY})[1])["authToken"]
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    test = {"X-Test-Key": test_key}
    cases = [
        ("GET", "/v1/ws", {}, None, 426),
        ("GET", "/v1/ws", dict(upgrade, Authorization="Bearer v1.not.valid"), None, 401),
        ("GET", "/v1/ws", dict(upgrade, Authorization="Basic abc"), None, 401),
        ("GET", "/v1/ws?deviceId=not%20valid", dict(upgrade, Authorization=f"Bearer {token}"), None, 400),
        ("GET", "/v1/test/clock", {}, None, 401),
        ("GET", "/v1/test/clock", test, None, 200),
        ("POST", "/v1/test/clock/advance", test, {"ms": 1}, 409),
        ("POST", "/v1/test/clock", test, {"mode": "manual"}, 200),
        ("POST", "/v1/test/clock/advance", test, {"ms": 1000}, 200),
        ("POST", "/v1/test/clock/advance", test, {"ms": -1}, 400),
        ("POST", "/v1/test/clock", test, {"mode": "real"}, 200),
        ("GET", "/v1/test/transitions?limit=5", test, None, 200),
        ("GET", "/v1/test/transitions?afterSeq=x", test, None, 400),
        ("POST", "/v1/test/devices/nobody/nowhere/drop", test, None, 404),
        ("POST", "/v1/test/devices/nobody/nowhere/explode", test, None, 404),
        ("POST", "/v1/test/store/fail", test, {"commits": 0}, 200),
        ("GET", "/v1/test/tap", test, None, 426),
    ]
    for method, path, headers, body, expected in cases:
        status, payload = http(address, method, path, headers, body)
        label = f"{method} {path} → {status}"
        template, _ = docs.operation(method, path.split("?")[0])
        validator, missing = docs.response_validator(template, method, status)
        if status != expected:
            problems.append(f"{label}, expected {expected}: {payload[:200]}")
        elif missing:
            problems.append(f"{label}: {missing}")
        elif validator is not None:
            error = first_error(validator, json.loads(payload))
            if error:
                problems.append(f"{label} breaks docs/openapi.yaml {error}")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"probed: {len(cases)} answers of /v1/ws and the test API, {len(problems)} off the document", flush=True)
    return not problems


def http(address, method, path, headers, body=None):
    """One request on a fresh connection: the status and the body as text."""
    host, port = address.split(":")
    connection = HTTPConnection(host, int(port), timeout=10)
    try:
        data = None if body is None else json.dumps(body)
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-examples", type=int, default=6)
    parser.add_argument("--seed", type=int, default=20261203)
    arguments = parser.parse_args()
    schemathesis = Path(sys.executable).parent / "schemathesis"
    test_key = "contract-" + secrets.token_hex(16)
    process, address = start_ringd(test_key)
    workdir = tempfile.mkdtemp(prefix="ringd-contract-")
    devices = []
    try:
        docs = Documents()
        declined, ongoing, devices, frames_valid = seed(docs, address)
        frames_valid = probe(docs, address, test_key) and frames_valid
        # The seeded calls for the routes that read one call (their other cases are generated).
        with open(os.path.join(workdir, "schemathesis.toml"), "w", encoding="utf-8") as config:
            config.write(f"""
[[operations]]
include-name = "GET /v1/calls/{{sessionId}}"
parameters = {{ sessionId = "{declined}" }}

[[operations]]
include-name = "POST /v1/calls/{{sessionId}}/media-token"
parameters = {{ sessionId = "{ongoing}" }}
""")
        command = [
            str(schemathesis), "run", str(ROOT / "docs" / "openapi.yaml"),
            "--url", f"http://{address}",
            "--header", f"X-Api-Key: {API_KEY}",
            "--exclude-path-regex", "^/v1/(test/.*|ws)$",
            "--checks", ",".join(CHECKS),
            "--max-examples", str(arguments.max_examples),
            "--seed", str(arguments.seed),
            "--workers", "1",
            "--request-timeout", "10",
            "--max-failures", "20",
            "--suppress-health-check", "all",
            "--warnings", "off",
        ]
        print("$", " ".join(command), flush=True)
        env = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=os.path.join(workdir, ".hypothesis"),
                   NO_COLOR="1")
        result = subprocess.run(command, cwd=workdir, env=env, timeout=300)
    finally:
        for device in devices:
            device.socket.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    if process.returncode not in (0, -15):
        print(f"ringd exited with {process.returncode}")
        return 1
    return result.returncode or (0 if frames_valid else 1)


if __name__ == "__main__":
    sys.exit(main())
