#!/usr/bin/env python3
"""Ping flood (docs/BENCHMARKS.md, "Ping flood"): one WebSocket sends PINGS masked
pings of PAYLOAD_BYTES (default 2,000,000 empty ones) without reading, then
a close, then reads everything until EOF; meanwhile another thread times
GET /healthz on fresh connections every 20 ms. Prints how many pongs came
back, the ringd's CPU time over the flood per thread (from /proc; with
RINGD_THREADS=1 the busiest thread is the loop) and the /healthz latencies.
Not a test: numbers depend on the machine.

    RINGD_THREADS=1 RINGD_LISTEN_PORT=18790 RINGD_STORE_PATH=/tmp/pf/ringd.sqlite \
        .build/release/ringd & sleep 1; bench/ping_flood.py 18790 $! [PINGS [PAYLOAD_BYTES]]; kill $!
"""
import os, socket, sys, threading, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
pings = int(sys.argv[3]) if len(sys.argv) > 3 else 2_000_000
size = int(sys.argv[4]) if len(sys.argv) > 4 else 0

def thread_cpu():
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except FileNotFoundError:
            continue
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out

def healthz():
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    s.close()
    assert data.startswith(b"HTTP/1.1 200"), data[:80]
    return time.monotonic() - start

latencies, done = [], threading.Event()
def poll():
    while not done.is_set():
        latencies.append(healthz())
        time.sleep(0.02)

ws = socket.socket()
ws.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
ws.connect(("127.0.0.1", port))
ws.sendall(b"GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    head += ws.recv(1)
assert head.startswith(b"HTTP/1.1 101"), head
mask = b"\x01\x02\x03\x04"
ping = bytes([0x89, 0x80 | size]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(b"*" * size))
idle = min(healthz() for _ in range(5))
cpu0 = thread_cpu()
t0 = time.monotonic()
poller = threading.Thread(target=poll)
poller.start()
ws.settimeout(10)
sent, batch = 0, 10_000
try:
    while sent < pings:
        n = min(batch, pings - sent)
        ws.sendall(ping * n)
        sent += n
    ws.sendall(b"\x88\x82\x01\x02\x03\x04" + bytes([0x03 ^ 1, 0xE8 ^ 2]))  # close 1000
except socket.timeout:
    print(f"send blocked after {sent} pings: the server stopped reading")
t_sent = time.monotonic()
received = 0
ws.settimeout(30)
try:
    while chunk := ws.recv(1 << 20):
        received += len(chunk)
except (socket.timeout, ConnectionResetError) as error:
    print(f"read ended: {error!r}")
t_end = time.monotonic()
done.set()
poller.join()
cpu1 = thread_cpu()
busy = sorted(((cpu1[t][1] - cpu0.get(t, ("", 0))[1], cpu1[t][0]) for t in cpu1), reverse=True)
print(f"pings sent {sent} in {t_sent - t0:.2f}s; drained {received} bytes (~{received // (2 + size)} pongs) in {t_end - t_sent:.2f}s")
print("ringd CPU over the flood: total %.2fs; busiest threads: %s" % (
    sum(b for b, _ in busy), ", ".join(f"{name} {b:.2f}s" for b, name in busy[:3])))
latencies.sort()
print(f"/healthz idle {idle * 1000:.1f} ms; during the flood: {len(latencies)} requests, "
      f"median {latencies[len(latencies) // 2] * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms")
