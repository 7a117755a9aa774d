"""Fixtures for testing an app against ringd: one ephemeral ringd for the
session (in memory, a free port, the test API on), reset after every test,
and devices that speak the public protocol over WebSocket.

Point RINGD at the binary (default: the repository's .build/debug/ringd,
else ringd on the PATH)."""

import asyncio
import json
import os
import secrets
import select
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
import websockets

AUTH_KEY = "ringd-dev-auth-key"  # the development key an ephemeral ringd accepts


def ringd_executable():
    given = os.environ.get("RINGD")
    if given:
        return given
    built = Path(__file__).resolve().parents[2] / ".build" / "debug" / "ringd"
    return str(built) if built.exists() else shutil.which("ringd")


class Ringd:
    """A running `ringd --ephemeral`: its URLs and the test API."""

    def __init__(self):
        self.test_key = "test-" + secrets.token_hex(16)
        # ringd refuses RINGD_ variables it does not know: pass on none of ours.
        env = {k: v for k, v in os.environ.items() if not k.startswith("RINGD")}
        env.update(RINGD_TESTING_ENABLED="true", RINGD_TESTING_KEY=self.test_key)
        self.process = subprocess.Popen([ringd_executable(), "--ephemeral"], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # Its readiness line, "listening ws://127.0.0.1:PORT", within 10 s.
        ready, _, _ = select.select([self.process.stdout], [], [], 10)
        line = self.process.stdout.readline() if ready else ""
        if not line.startswith("listening ws://"):
            self.process.kill()
            raise RuntimeError(f"ringd did not start: {line!r}")
        self.address = line.split("ws://", 1)[1].strip()
        self.ws_url = f"ws://{self.address}/v1/ws"

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)

    def api(self, method, path, body=None):
        """One request to the test API; the JSON answer (None for 204)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://{self.address}{path}", data=data, method=method,
                                         headers={"X-Test-Key": self.test_key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return json.loads(text) if text else None

    def manual_clock(self):
        self.api("POST", "/v1/test/clock", {"mode": "manual"})

    def advance(self, ms):
        """Moves the manual clock; returns once what fell due is delivered."""
        return self.api("POST", "/v1/test/clock/advance", {"ms": ms})["fired"]

    def transitions(self, session_id):
        return self.api("GET", f"/v1/test/transitions?sessionId={session_id}")["transitions"]


class Device:
    """One device of a user on ringd's WebSocket: requests and call events."""

    def __init__(self, ringd, uid, device_id):
        self.ringd, self.uid, self.device_id = ringd, uid, device_id
        self.events, self.counter = [], 0

    async def __aenter__(self):
        self.ws = await websockets.connect(self.ringd.ws_url)
        answer = await self.request("auth", uid=self.uid, authKey=AUTH_KEY, deviceId=self.device_id)
        assert answer["ok"], answer
        return self

    async def __aexit__(self, *exc):
        await self.ws.close()

    async def request(self, type_, **params):
        self.counter += 1
        request_id = str(self.counter)
        await self.ws.send(json.dumps({"type": type_, "id": request_id, **params}))
        while True:
            frame = json.loads(await self.ws.recv())
            if frame["type"] == "call":
                self.events.append(frame["call"])
            elif frame.get("id") == request_id:
                return frame

    async def next_event(self, timeout=10):
        """The next call event (already read, or read now)."""
        if self.events:
            return self.events.pop(0)
        async with asyncio.timeout(timeout):
            while True:
                frame = json.loads(await self.ws.recv())
                if frame["type"] == "call":
                    return frame["call"]


@pytest.fixture(scope="session")
def ringd():
    server = Ringd()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fresh(ringd):
    """Every test starts on a new server: no calls, no devices, the real clock."""
    yield
    ringd.api("POST", "/v1/test/reset")


@pytest.fixture
def device(ringd):
    return lambda uid, device_id: Device(ringd, uid, device_id)
