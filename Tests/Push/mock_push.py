#!/usr/bin/env python3
"""A mock of the three push endpoints ringd talks to, for ringd's tests.

One process, one TLS port on 127.0.0.1, three endpoints:

  APNs       POST /3/device/<hex token>              (token auth, ES256 JWT)
  OAuth      POST /token                             (JWT-bearer grant, RS256)
  FCM v1     POST /v1/projects/<project>/messages:send  (a token from /token)

Every request is checked as the real service would check it, and more
strictly where ringd's own contract says so (the VoIP payload's fields, the
FCM data values). Each failed check is a short string in the request's
`violations`, and every request is one JSON line in the --log file, written
before its answer is sent, so a client that has its answer finds the line.
The violations, not the status, are how a test learns of a malformed
request; only authentication is answered as the real service answers it
(403, 400, 401), because ringd must act on those answers. --script gives
chosen answers (410 Unregistered, 429, 503...) to chosen device tokens.

Why asyncio and h2 rather than a web framework: the mock must bind port 0
and say which port it got, negotiate h2 by ALPN (and record it when a
client fell back to HTTP/1.1, which APNs would refuse), and answer the
streams of one connection independently, so that --delay-ms holds up each
answer without holding up the others. A small loop over h2's state machine
(here) does all that; push_services.py holds the endpoints and
push_checks.py the checks they share. The only blocking calls on the loop are the
log's short appends, flushed at once.

Run with --help for the arguments. Prints `listening <port>` once it
listens; serves until SIGTERM or SIGINT, then exits 0.
"""

import argparse
import asyncio
import http
import os
import signal
import ssl
import sys
import time

# -I (isolated mode, as the tests run it) leaves the script's directory off
# the path: put it back for the two modules beside this one.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
import h2.exceptions  # noqa: E402
import h2.settings  # noqa: E402

from push_checks import DIGITS, Request  # noqa: E402
from push_services import Mock  # noqa: E402


def fold_headers(pairs):
    headers = {}
    for name, value in pairs:
        name = name.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


class Server:
    """Connections, HTTP/2 by ALPN or HTTP/1.1, each request to ``Mock``."""

    def __init__(self, mock, delay):
        self.mock, self.delay = mock, delay
        self.connections = 0
        self.tasks = set()  # answers in flight, held so they are not collected

    async def serve(self, reader, writer):
        self.connections += 1
        connection_id = self.connections
        alpn = writer.get_extra_info("ssl_object").selected_alpn_protocol()
        try:
            if alpn == "h2":
                await self.serve_h2(reader, writer, connection_id)
            else:
                await self.serve_http1(reader, writer, connection_id)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # shutting down: end quietly (3.11's stream callback would print the cancellation)
        finally:
            writer.close()

    async def answer(self, request):
        """Checks and answers at once, so that the mock's state (script, token
        counts) follows the order requests came in; logs; waits --delay-ms."""
        answer, record = self.mock.handle(request)
        # Logged on arrival, before any delay: a client that has its answer
        # finds its line, and a delayed request is seen while it waits.
        self.mock.write_log(record)
        if self.delay:
            await asyncio.sleep(self.delay)
        return answer

    async def serve_h2(self, reader, writer, connection_id):
        connection = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        connection.initiate_connection()
        # APNs takes up to 1,000 concurrent streams per connection; h2's
        # default of 100 would make a slow mock queue requests APNs would not.
        connection.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000})
        writer.write(connection.data_to_send())
        streams = {}  # stream id -> (header pairs, body so far)
        while data := await reader.read(65536):
            try:
                events = connection.receive_data(data)
            except h2.exceptions.ProtocolError as error:
                print(f"mock_push: connection {connection_id}: {error}", file=sys.stderr, flush=True)
                writer.write(connection.data_to_send())
                return
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = (event.headers, bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    streams[event.stream_id][1].extend(event.data)
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    pairs, body = streams.pop(event.stream_id)
                    headers = fold_headers(pairs)
                    request = Request(connection_id, "2", event.stream_id, headers.get(":method", ""),
                                      headers.get(":path", ""), headers, bytes(body), time.time())
                    self.spawn(self.answer_h2(connection, writer, request))
                elif isinstance(event, h2.events.StreamReset):
                    streams.pop(event.stream_id, None)
            writer.write(connection.data_to_send())
            await writer.drain()

    async def answer_h2(self, connection, writer, request):
        answer = await self.answer(request)
        if writer.is_closing():
            return
        headers = [(":status", str(answer.status)), ("content-length", str(len(answer.body))), *answer.headers]
        try:
            connection.send_headers(request.stream_id, headers, end_stream=not answer.body)
            if answer.body:  # a few hundred bytes: within any flow-control window
                connection.send_data(request.stream_id, answer.body, end_stream=True)
        except h2.exceptions.StreamClosedError:
            return  # the client reset the stream meanwhile
        writer.write(connection.data_to_send())

    async def serve_http1(self, reader, writer, connection_id):
        """Requests one after the other, with Content-Length bodies (what
        libcurl sends; no chunked uploads)."""
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                return
            lines = head.decode("latin-1").split("\r\n")
            request_line = lines[0].split(" ")
            if len(request_line) != 3:
                writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                return
            headers = fold_headers((name.strip(), value.strip())
                                   for name, value in (line.split(":", 1) for line in lines[1:] if ":" in line))
            if headers.get("expect", "").lower() == "100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            length = headers.get("content-length", "0")
            body = await reader.readexactly(int(length) if DIGITS.fullmatch(length) else 0)
            request = Request(connection_id, "1.1", None, request_line[0], request_line[1], headers, body,
                              time.time())
            answer = await self.answer(request)
            try:
                reason = http.HTTPStatus(answer.status).phrase
            except ValueError:
                reason = "Unknown"
            lines = [f"HTTP/1.1 {answer.status} {reason}", f"content-length: {len(answer.body)}",
                     *(f"{name}: {value}" for name, value in answer.headers)]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + answer.body)
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                return

    def spawn(self, coroutine):
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def arguments():
    parser = argparse.ArgumentParser(description="Mock APNs, Google OAuth and FCM v1 endpoints for ringd's tests.")
    parser.add_argument("--cert", required=True, help="server certificate, PEM")
    parser.add_argument("--key", required=True, help="its private key, PEM")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--apns-public-key", required=True, help="P-256 public key (SubjectPublicKeyInfo PEM)")
    parser.add_argument("--apns-key-id", required=True, help="the JWT's kid")
    parser.add_argument("--apns-team-id", required=True, help="the JWT's iss")
    parser.add_argument("--fcm-public-key", required=True, help="the service account's RSA public key, PEM")
    parser.add_argument("--fcm-client-email", required=True, help="the assertion's iss")
    parser.add_argument("--fcm-project", required=True, help="the project in the FCM path")
    parser.add_argument("--script", help="JSON {token: [answer, ...]}; \"*\" for every other token")
    parser.add_argument("--log", help="JSON Lines file every request is appended to")
    parser.add_argument("--delay-ms", type=int, default=0, help="wait this long before each answer")
    parser.add_argument("--access-token-lifetime", type=int, default=3600, help="seconds an access token lasts")
    return parser.parse_args()


async def main(args):
    mock = Mock(args)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2", "http/1.1"])
    server = Server(mock, args.delay_ms / 1000)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", args.port, ssl=context)
    mock.port = listener.sockets[0].getsockname()[1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    # A child inherits its parent's signal mask, and a test process spawns
    # from threads (libdispatch's) that block SIGTERM: unblock it, or the
    # mock would never hear it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    print(f"listening {mock.port}", flush=True)
    await stop.wait()
    listener.close()  # open connections and answers in flight are cancelled as asyncio.run returns


if __name__ == "__main__":
    asyncio.run(main(arguments()))
