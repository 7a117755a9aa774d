"""A webhook receiver for bench/webhooks.sh: not part of ringd.

    python3 bench/webhook_receiver.py ok          answers 200 at once
    python3 bench/webhook_receiver.py slow [S]    sleeps S seconds (10) per request, then answers 200
    python3 bench/webhook_receiver.py refuse      holds a port bound without listening: connects are refused

Binds 127.0.0.1 on a free port and prints one line, "listening PORT", once
ready. ok and slow serve HTTP/1.1 with keep-alive from a thread per
connection (ThreadingHTTPServer), so a sleeping request holds up only its
own connection. It does not check signatures (the tests do): it only reads
the body. On SIGTERM or SIGINT it prints "requests N" (requests whose body
was read) and "cpu S" (its own CPU seconds, user and system), and exits.
"""

import http.server
import os
import signal
import socket
import sys
import threading
import time


class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self.lock:
            self.value += 1


def serve(delay: float) -> None:
    requests = Counter()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            requests.add()
            if delay:
                time.sleep(delay)
            try:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass  # ringd gave up first (its timeout): nobody to answer

        def log_message(self, format: str, *args: object) -> None:
            pass

        def handle(self) -> None:
            try:
                super().handle()
            except OSError:
                pass

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    server = Server(("127.0.0.1", 0), Handler)
    stop(lambda: print(f"requests {requests.value}", flush=True))
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


def refuse() -> None:
    # Bound and never listening: the kernel answers every connect with a
    # reset (ECONNREFUSED), and no other process can take the port meanwhile.
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    stop(lambda: print("requests 0", flush=True))
    print(f"listening {holder.getsockname()[1]}", flush=True)
    while True:
        signal.pause()


def stop(report) -> None:
    def handler(signum, frame) -> None:
        report()
        times = os.times()
        print(f"cpu {times.user + times.system:.2f}")
        sys.stdout.flush()
        # Threads may be asleep in a request: leave without waiting for them.
        os._exit(0)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "ok":
        serve(0)
    elif mode == "slow":
        serve(float(sys.argv[2]) if len(sys.argv) > 2 else 10.0)
    elif mode == "refuse":
        refuse()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
