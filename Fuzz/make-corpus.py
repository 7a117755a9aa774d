#!/usr/bin/env python3
"""Writes the seed corpora in Fuzz/Corpus/<target>/ from the inputs of the
unit tests (Tests/), config.json and docs/PROTOCOL.md. Rerun after changing
it; the files are committed so that the fuzzers start from them without it.
Each file is named for its content's hash, so reruns keep the names and
inputs added by hand (regression inputs) stay beside them."""

import hashlib
import os
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")
MASK = bytes([0x37, 0xFA, 0x21, 0x3D])  # testMaskKey in Tests/SignalProtocolTests


def write(target, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


# HTTP: a chunk-size byte, then the stream.
HTTP = [
    "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "GET / HTTP/1.1\r\n\r\n",
    "GET  / HTTP/1.1\r\n\r\n",
    "GET / HTTP/0.9\r\n\r\n",
    "GET / HTTP/1.10\r\n\r\n",
    "GET / HTTP/2.0\r\n\r\n",
    "GET / http/1.1\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x01c\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n two\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n\ttwo\r\n\r\n",
    "GET /lf HTTP/1.1\nHost: a\nX-B: c\n\nPOST /p HTTP/1.1\nHost: a\nContent-Length: 2\n\nok",
    "GET /p/q?a=1&b=x+y%21&c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n",
    "\r\n\r\nGET /c HTTP/1.0\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nab",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5, 5\r\n\r\nhello",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
    "POST /b HTTP/1.1\r\nHost: example\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "POST /v1/users/alice/tokens HTTP/1.1\r\nHost: localhost:8787\r\nX-Api-Key: ringd-dev-api-key\r\n"
    "Content-Type: application/json\r\nContent-Length: 19\r\n\r\n{\"ttlSeconds\":3600}",
    "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "GET /v1/ws HTTP/1.1\r\nHost: localhost:8787\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n",
    "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
]
for index, text in enumerate(HTTP):
    write("fuzz-http", bytes([[0, 1, 6, 255][index % 4]]) + text.encode("latin-1"))


def frame(opcode, payload, fin=True, rsv=0, masked=True):
    """A frame as RFC 6455 §5.2 lays it out; rsv as the low three bits."""
    out = bytearray([(0x80 if fin else 0) | (rsv << 4) | opcode])
    mask_bit = 0x80 if masked else 0
    if len(payload) < 126:
        out.append(mask_bit | len(payload))
    elif len(payload) <= 0xFFFF:
        out += bytes([mask_bit | 126]) + len(payload).to_bytes(2, "big")
    else:
        out += bytes([mask_bit | 127]) + len(payload).to_bytes(8, "big")
    if masked:
        out += MASK
        payload = bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))
    return bytes(out) + payload


TEXT, BINARY, CONTINUATION, CLOSE, PING, PONG = 1, 2, 0, 8, 9, 10
STREAMS = [
    frame(TEXT, b"Hello") + frame(BINARY, b"\x00\x01\xff") + frame(TEXT, b"") + frame(BINARY, b""),
    frame(TEXT, b"Hel", fin=False) + frame(CONTINUATION, b"lo"),
    frame(BINARY, b"", fin=False) + frame(CONTINUATION, b"\x01\x02", fin=False) + frame(CONTINUATION, b"")
    + frame(CONTINUATION, b"\x03"),
    frame(TEXT, b"a", fin=False) + frame(PING, b"p") + frame(CONTINUATION, b"b") + frame(PONG, b""),
    frame(TEXT, "κόσμε".encode()[:3], fin=False) + frame(CONTINUATION, "κόσμε".encode()[3:]),
    frame(TEXT, b"\xce\xba\xe1"),
    frame(TEXT, b"\xed\xa0\x80"),
    frame(CLOSE, b"\x03\xe8bye") + frame(TEXT, b"after"),
    frame(CLOSE, b"\x03\xed") + frame(CLOSE, b"\x03"),
    frame(CLOSE, b""),
    frame(PING, b"x" * 125) + frame(PING, b"x" * 126),
    frame(BINARY, bytes(range(200))),
    frame(BINARY, bytes(70000)[:1100]),
    frame(CONTINUATION, b"orphan"),
    frame(TEXT, b"a", fin=False) + frame(TEXT, b"b"),
    frame(PING, b"", fin=False),
    frame(TEXT, b"x", rsv=2),
    frame(0x3, b""),
    frame(TEXT, b"unmasked", masked=False),
    bytes([0x82, 0xFE, 0x00, 0x10]) + MASK + bytes(16),  # length not minimal
    bytes([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0]) + MASK,
]
for index, stream in enumerate(STREAMS):
    # Options: bit 0 client end, bits 1-2 the limit (125, 1000, 4096, 65536).
    write("fuzz-websocket", bytes([[0, 2, 255][index % 3], [2, 4, 6][index % 3]]) + stream)
write("fuzz-websocket", bytes([0, 3]) + frame(TEXT, b"from the server", masked=False)
      + frame(CLOSE, b"\x03\xe8", masked=False))


def deflate(data, compressor=None):
    """Raw deflate, sync-flushed, without the 00 00 FF FF tail (RFC 7692 §7.2.1)."""
    compressor = compressor or zlib.compressobj(wbits=-15)
    out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


RSV1 = 4
hello = deflate(b"Hello")
takeover = zlib.compressobj(wbits=-15)
first, second = deflate(b"Hello Hello", takeover), deflate(b"Hello again", takeover)
DEFLATE_STREAMS = [
    frame(TEXT, hello, rsv=RSV1),
    frame(TEXT, hello[:2], fin=False, rsv=RSV1) + frame(PING, b"p") + frame(CONTINUATION, hello[2:])
    + frame(BINARY, b"\x01\x02"),
    frame(TEXT, first, rsv=RSV1) + frame(TEXT, second, rsv=RSV1),
    frame(BINARY, deflate(bytes(5000)), rsv=RSV1),
    frame(BINARY, deflate(bytes(range(256)) * 4), rsv=RSV1),
    frame(TEXT, deflate("κόσμε".encode()), rsv=RSV1),
    frame(TEXT, deflate(b"\xff\xfe"), rsv=RSV1),
    frame(TEXT, b"\x00\x00\xff\xff" * 3, rsv=RSV1),
    frame(TEXT, b"\x03\x00", rsv=RSV1),  # an empty final block
    frame(TEXT, b"\xff\xff\xff", rsv=RSV1),
    frame(TEXT, hello, fin=False, rsv=RSV1) + frame(CONTINUATION, hello, rsv=RSV1),
    frame(TEXT, b"plain") + frame(TEXT, hello, rsv=RSV1),
    frame(TEXT, zlib.compress(b"zlib header", wbits=15), rsv=RSV1),
]
for index, stream in enumerate(DEFLATE_STREAMS):
    # Options: bits as fuzz-websocket, plus bit 3 context takeover, bit 4 a stream cache.
    write("fuzz-websocket-deflate", bytes([[0, 3, 255][index % 3], [2, 12, 18, 28][index % 4]]) + stream)

JSON = [
    "null", "true", "false", "\"hi\"", "[]", "{}", " \t\r\n[ 1 , \"a\" , null , true , { } , [ ] ] \n",
    '{"type":"offer","id":7,"data":{"sdp":"v=0"},"list":[1,2.5]}',
    '{"a":1,"b":true,"a":"two","a":3}',
    "0", "-0", "-17", "1.5", "1e3", "1E3", "1e+3", "1e-3", "-1.25e2", "-0.0",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "123456789012345678901234567890",
    "1e400", "01", "1.", ".5", "[1,]", '{"a":1,}',
    '"\\u00e9\\ud83d\\ude00\\n\\t\\"\\\\\\/\\b\\f\\r"', '"\\ud800"', '"\\udc00x"', '"\\u12"',
    "\"\u00e9\u4e2d\U0001F600\"", "[" * 64 + "]" * 64, "[" * 65 + "]" * 65,
]
for text in JSON:
    write("fuzz-json", text.encode())
write("fuzz-json", b'"\xff"')

FRAMES = [
    '{"type":"auth","id":"1","authToken":"t"}',
    '{"type":"auth","id":"1","uid":"alice","authKey":"k","deviceId":"a1"}',
    '{"type":"auth","id":"1","uid":"alice","authKey":"ringd-dev-auth-key","deviceId":"laptop"}',
    '{"type":"dance","id":"7"}',
    '{"type":"getActiveCall","id":"1"}',
    '{"type":"getActiveCall"}',
    '{"type":"getCallLogs","id":"1","limit":10,"callStatus":"missed"}',
    '{"type":"getCallLogs","id":"8","limit":2,"callStatus":"missed","direction":"incoming"}',
    '{"type":"getCallLogs","id":"9","cursor":"AAAAAAAAACk","callType":"video","callStatus":"ended",'
    '"direction":"outgoing","with":"bob"}',
    '{"type":"initiateCall","id":"1","receiverId":"bob","callType":"audio","timeout":30}',
    '{"type":"initiateCall","id":"2","receiverId":"a b","callType":"audio"}',
    '{"type":"initiateCall","id":"2b","receiverId":"bob","callType":"audio","timeoutMs":200}',
    '{"type":"initiateCall","id":"1","receiverId":"bob","callType":"audio","timeout":1,"timeoutMs":1000}',
    '{"type":"initiateCall","id":"2","receiverId":"bob","callType":"video","timeout":30,"metadata":{"topic":"standup"}}',
    '{"type":"initiateCall","id":"3","receiverId":"bob","callType":"video","metadata":{"n":[1.5,-0.0,1e300,null]}}',
    '{"type":"acceptCall","id":"3","sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d"}',
    '{"type":"rejectCall","id":"1","sessionId":"s","status":"rejected"}',
    '{"type":"rejectCall","id":"4","sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d","status":"busy"}',
    '{"type":"cancelCall","id":"5","sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d"}',
    '{"type":"endCall","id":"6","sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d"}',
    '{"type":"getActiveCall","id":"' + "x" * 65 + '"}',
    '[{"type":"getActiveCall","id":"1"}]',
    '{"type":"signal","id":"12","sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d","payload":{"kind":"offer","sdp":"v=0\\r\\n"}}',
    '{"type":"signal","id":"13","sessionId":"s","payload":{"kind":"candidate","candidate":{"candidate":"candidate:1 1 udp 1 127.0.0.1 9 typ host","sdpMid":"0","sdpMLineIndex":0}}}',
    '{"type":"signal","id":"14","sessionId":"s","payload":"offer"}',
    '{"type":"getIceServers","id":"15"}',
]
for text in FRAMES:
    write("fuzz-client-frame", text.encode())

CONFIGS = [
    "{}",
    '{"limits": {"outboundSoftLimitBytes": 8192, "outboundHardLimitBytes": 4096}}',
    '{"listen": 8080}',
    '{"listen": {"host": ""}}',
    '{"listen": {"port": 1,}}',
    '{"listen": {"port": 1}, "colour": "blue"}',
    '{"listen": {"port": 8443}, "tls": {"certificate": "c", "privateKey": "k", "port": 8443}}',
    '{"listen": {"port": 9000}, "ws": {"maxMessageBytes": 4096}}',
    '{"listen": {"port": 65536}}',
    '{"logLevel": "loud"}',
    '{"logLevel": "debug", "threads": 2}',
    '{"tls": {"certificate": ""}}',
    '{"tls": {"certificate": "c.pem"}}',
    '{"tls": {"minVersion": "1.1"}}',
    '{"tls": {"port": 8443}}',
    '{"ws": {"compression": "yes"}}',
    '{"ws": {"compression": true, "compressionThresholdBytes": 0, "compressionContextTakeover": true}}',
    '{"ws": {"compressionThresholdBytes": -1}}',
    '{"ws": {"maxMesageBytes": 1000}}',
    '{"ws": {"maxMessageBytes": 10}}',
    '{"ws": {"pingIntervalSeconds": "5"}}',
    '{"ws": {"pingIntervalSeconds": 10, "pingTimeoutSeconds": 5}}',
    '{"ws": {"pingIntervalSeconds": 0.5, "pingTimeoutSeconds": 1.5e1}}',
    '{"auth": {"authKeys": ["a", ""], "tokenSecret": "short"}}',
    '{"auth": {"apiKeys": "k", "tokenSecret": "0123456789abcdef"}}',
    '{"store": {"path": "x.sqlite", "synchronous": "full"}, "calls": {"ringTimeoutSeconds": 301}}',
    "[]",
]
for text in CONFIGS:
    write("fuzz-config", text.encode())
with open(os.path.join(ROOT, "config.json"), "rb") as f:
    write("fuzz-config", f.read())
