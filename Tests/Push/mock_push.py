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
does all that in one file. The only blocking calls on the loop are the
log's short appends, flushed at once.

Run with --help for the arguments. Prints `listening <port>` once it
listens; serves until SIGTERM or SIGINT, then exits 0.
"""

import argparse
import asyncio
import base64
import http
import json
import re
import signal
import ssl
import sys
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field

import h2.config
import h2.settings
import h2.connection
import h2.events
import h2.exceptions
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

APNS_PATH = re.compile(r"/3/device/([^/?#]*)")
FCM_PATH = re.compile(r"/v1/projects/([^/?#]+)/messages:send")
HEX = re.compile(r"[0-9A-Fa-f]+")
CANONICAL_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
DIGITS = re.compile(r"[0-9]+")
TTL = re.compile(r"[0-9]+s")

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
APNS_MAX_BODY = 5120
CALL_TYPES = ("audio", "video")
FCM_TYPES = ("incoming_call", "call_cancelled")
# Unix milliseconds from 2001 to 5138: a count of seconds (or of
# microseconds) falls outside, which is the mistake worth catching.
MILLISECONDS = range(10**12, 10**14)

# Default reasons (APNs) and error names (FCM) for a scripted status that
# gives none, as the real services name them.
APNS_REASONS = {400: "BadDeviceToken", 403: "ExpiredProviderToken", 404: "BadPath", 405: "MethodNotAllowed",
                410: "Unregistered", 413: "PayloadTooLarge", 429: "TooManyRequests",
                500: "InternalServerError", 503: "ServiceUnavailable"}
FCM_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
FCM_ERRORS = {400: "INVALID_ARGUMENT", 401: "THIRD_PARTY_AUTH_ERROR", 403: "SENDER_ID_MISMATCH",
              404: "UNREGISTERED", 429: "QUOTA_EXCEEDED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class Request:
    """One complete request, whichever HTTP version carried it."""
    connection_id: int
    http_version: str  # "2" or "1.1"
    stream_id: int | None  # None over HTTP/1.1
    method: str
    path: str
    headers: dict  # lower-case name -> value (repeats joined by ", "); HTTP/2 pseudo-headers included
    body: bytes
    received_at: float  # Unix seconds, when the last byte arrived


@dataclass
class Answer:
    status: int
    headers: list = field(default_factory=list)
    body: bytes = b""


@dataclass
class Jwt:
    header: dict
    claims: dict
    signing_input: bytes  # "header.claims" as sent
    signature: bytes


def json_answer(status, value, headers=()):
    return Answer(status, [("content-type", "application/json"), *headers], json.dumps(value).encode())


def is_integer(value):
    return isinstance(value, int) and not isinstance(value, bool)


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {str: "string", dict: "object", list: "array"}.get(type(value), "number")


def strict_json(data):
    """Parses UTF-8 JSON, refusing NaN and Infinity as RFC 8259 does."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(data.decode("utf-8"), parse_constant=refuse)


def base64url(part):
    """Unpadded base64url (RFC 7515 section 2), or None when it is not."""
    if not BASE64URL.fullmatch(part) or len(part) % 4 == 1:
        return None
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def parse_jwt(text, violations):
    """A compact JWS split and decoded; None (with a violation) if malformed."""
    parts = text.split(".")
    if len(parts) != 3:
        violations.append(f"JWT has {len(parts)} parts, not 3")
        return None
    decoded = [base64url(part) for part in parts]
    for name, value in zip(("header", "claims", "signature"), decoded):
        if value is None:
            violations.append(f"JWT {name} is not unpadded base64url")
            return None
    objects = []
    for name, value in zip(("header", "claims"), decoded):
        try:
            parsed = strict_json(value)
        except ValueError as error:
            violations.append(f"JWT {name} is not JSON: {error}")
            return None
        if not isinstance(parsed, dict):
            violations.append(f"JWT {name} is a JSON {json_type(parsed)}, not an object")
            return None
        objects.append(parsed)
    return Jwt(objects[0], objects[1], f"{parts[0]}.{parts[1]}".encode("ascii"), decoded[2])


def bearer(request, violations, scheme_case):
    """The credentials of `authorization: <scheme> <credentials>`, or None."""
    value = request.headers.get("authorization")
    if value is None:
        violations.append("authorization missing")
        return None
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "bearer" or not credentials:
        violations.append(f"authorization is not '{scheme_case} <credentials>'")
        return None
    return credentials


def check_integer_header(request, name, violations):
    value = request.headers.get(name)
    if value is None:
        violations.append(f"{name} missing")
    elif not DIGITS.fullmatch(value):
        violations.append(f"{name} {value!r} is not an integer")
    else:
        return int(value)
    return None


def check_call_fields(fields, violations, prefix, as_strings):
    """The call fields both payloads carry. APNs sends them as JSON values,
    FCM as strings (its data values must all be strings)."""
    def value_of(key):
        value = fields.get(key)
        if value is None:
            violations.append(f"{prefix}{key} missing")
        return value

    caller = value_of("callerUid")
    if caller is not None and (not isinstance(caller, str) or not caller):
        violations.append(f"{prefix}callerUid is not a non-empty string")
    call_type = value_of("callType")
    if call_type is not None and call_type not in CALL_TYPES:
        violations.append(f"{prefix}callType {call_type!r} is not audio or video")
    for key, valid in (("initiatedAt", lambda n: n in MILLISECONDS), ("ringTimeout", lambda n: n > 0)):
        value = value_of(key)
        if value is None or (as_strings and not isinstance(value, str)):
            continue  # missing, or already reported as not a string
        if as_strings:
            number = int(value) if isinstance(value, str) and DIGITS.fullmatch(value) else None
        else:
            number = value if is_integer(value) else None
        if number is None:
            shape = "a string of digits" if as_strings else "an integer"
            violations.append(f"{prefix}{key} {value!r} is not {shape}")
        elif not valid(number):
            what = "Unix milliseconds" if key == "initiatedAt" else "positive seconds"
            violations.append(f"{prefix}{key} {number} is not {what}")
    name = fields.get("callerName")
    if name is not None and not isinstance(name, str):
        violations.append(f"{prefix}callerName is a {json_type(name)}, not a string")


class Mock:
    """What the three endpoints check and answer; no I/O but the log."""

    def __init__(self, args):
        self.args = args
        self.apns_key = load_public_key(args.apns_public_key, ec.EllipticCurvePublicKey)
        self.fcm_key = load_public_key(args.fcm_public_key, rsa.RSAPublicKey)
        self.script, self.wildcard = load_script(args.script)
        self.access_tokens = {}  # issued token -> expiry, Unix seconds
        self.issued = 0  # access tokens issued, for their names
        self.sent = 0  # FCM messages accepted, for their names
        self.port = None  # set once listening; the OAuth audience names it
        self.log = open(args.log, "a", encoding="utf-8") if args.log else None

    def handle(self, request):
        """The answer to `request` and its log record (status included)."""
        record = {"kind": "other", "receivedAt": request.received_at * 1000, "method": request.method,
                  "path": request.path, "httpVersion": request.http_version, "streamId": request.stream_id,
                  "connectionId": request.connection_id, "headers": request.headers, "body": None,
                  "rawBody": None, "bodyBytes": len(request.body), "token": None, "jwt": None,
                  "status": None, "violations": []}
        if request.method != "POST":
            record["violations"].append(f"method is {request.method}, not POST")
        if apns := APNS_PATH.fullmatch(request.path):
            answer = self.apns(request, record, apns.group(1))
        elif request.path == "/token":
            answer = self.oauth(request, record)
        elif fcm := FCM_PATH.fullmatch(request.path):
            answer = self.fcm(request, record, fcm.group(1))
        else:
            self.parse_body(request, record)
            record["violations"].append(f"no such endpoint: {request.method} {request.path}")
            answer = json_answer(404, {"error": "not found"})
        record["status"] = answer.status
        return answer, record

    def write_log(self, record):
        if self.log:
            self.log.write(json.dumps(record, separators=(",", ":")) + "\n")
            self.log.flush()

    def scripted(self, token):
        """The next scripted answer for `token`, or None for the usual success.
        A token the script does not list gets its own copy of the "*" list."""
        if token is None:
            return None
        if token not in self.script:
            if self.wildcard is None:
                return None
            self.script[token] = list(self.wildcard)
        answers = self.script[token]
        return answers.pop(0) if answers else None

    def parse_body(self, request, record, required=False):
        """The body as JSON into the record (else its text as rawBody)."""
        if not request.body and not required:
            return None
        try:
            record["body"] = strict_json(request.body)
            return record["body"]
        except ValueError as error:
            record["rawBody"] = request.body.decode("utf-8", "replace")
            record["violations"].append(f"body is not JSON: {error}")
            return None

    # APNs ----------------------------------------------------------------

    def apns(self, request, record, token):
        record["kind"], record["token"] = "apns", token
        violations = record["violations"]
        if not HEX.fullmatch(token):
            violations.append(f"device token {token!r} is not hex")
        if request.http_version != "2":
            violations.append(f"APNs takes HTTP/2 only; this came over HTTP/{request.http_version}")
        apns_id = request.headers.get("apns-id")
        answer_id = apns_id if apns_id and CANONICAL_UUID.fullmatch(apns_id) else str(uuid.uuid4()).upper()
        refusal = self.check_provider_token(request, record)
        self.check_apns_headers(request, violations)
        self.check_apns_body(request, record)
        if refusal:
            return json_answer(403, {"reason": refusal}, [("apns-id", answer_id)])
        scripted = self.scripted(token)
        if scripted and scripted["status"] != 200:
            status = scripted["status"]
            body = {"reason": scripted.get("reason") or APNS_REASONS.get(status, "BadRequest")}
            if status == 410:
                body["timestamp"] = int(request.received_at * 1000)
            headers = [("apns-id", answer_id)] + retry_after(scripted)
            return json_answer(status, body, headers)
        return Answer(200, [("apns-id", answer_id)])

    def check_provider_token(self, request, record):
        """None when the ES256 provider token is good, else APNs's reason."""
        violations = record["violations"]
        before = len(violations)
        credentials = bearer(request, violations, "bearer")
        if credentials is None:
            return "MissingProviderToken" if "authorization" not in request.headers else "InvalidProviderToken"
        jwt = parse_jwt(credentials, violations)
        if jwt is None:
            return "InvalidProviderToken"
        record["jwt"] = {"header": jwt.header, "claims": jwt.claims}
        now = request.received_at
        if jwt.header.get("alg") != "ES256":
            violations.append(f"JWT alg {jwt.header.get('alg')!r} is not ES256")
        if jwt.header.get("kid") != self.args.apns_key_id:
            violations.append(f"JWT kid {jwt.header.get('kid')!r} is not {self.args.apns_key_id!r}")
        if jwt.claims.get("iss") != self.args.apns_team_id:
            violations.append(f"JWT iss {jwt.claims.get('iss')!r} is not {self.args.apns_team_id!r}")
        iat = jwt.claims.get("iat")
        if not is_integer(iat):
            violations.append(f"JWT iat {iat!r} is not an integer")
        elif not now - 3600 <= iat <= now + 60:
            violations.append(f"JWT iat {iat} is not within the last hour (now {int(now)})")
        signature = jwt.signature
        if len(signature) != 64:
            hint = " (it looks DER-encoded)" if signature[:1] == b"\x30" else ""
            violations.append(f"ES256 signature is {len(signature)} bytes, not 64 of raw r||s{hint}")
        else:
            r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
            try:
                self.apns_key.verify(encode_dss_signature(r, s), jwt.signing_input, ec.ECDSA(hashes.SHA256()))
            except InvalidSignature:
                violations.append("ES256 signature does not verify with the APNs public key")
        return "InvalidProviderToken" if len(violations) > before else None

    @staticmethod
    def check_apns_headers(request, violations):
        headers, now = request.headers, request.received_at
        for name, wanted in (("apns-push-type", "voip"), ("apns-priority", "10")):
            if headers.get(name) != wanted:
                violations.append(f"{name} {headers.get(name)!r} is not {wanted!r}")
        topic = headers.get("apns-topic")
        if topic is None or not topic.endswith(".voip") or topic == ".voip":
            violations.append(f"apns-topic {topic!r} does not end with .voip")
        expiration = check_integer_header(request, "apns-expiration", violations)
        if expiration is not None and not now < expiration < now + 3600:
            violations.append(f"apns-expiration {expiration} is not within the next hour (now {int(now)})")
        apns_id = headers.get("apns-id")
        if apns_id is None:
            violations.append("apns-id missing")
        elif not CANONICAL_UUID.fullmatch(apns_id):
            violations.append(f"apns-id {apns_id!r} is not a canonical UUID")
        collapse = headers.get("apns-collapse-id")
        if collapse is None:
            violations.append("apns-collapse-id missing")
        elif len(collapse.encode()) > 64:
            violations.append(f"apns-collapse-id is {len(collapse.encode())} bytes, more than 64")
        content_type = headers.get("content-type")
        if content_type is not None and content_type.split(";")[0].strip().lower() != "application/json":
            violations.append(f"content-type {content_type!r} is not application/json")

    def check_apns_body(self, request, record):
        violations = record["violations"]
        if len(request.body) > APNS_MAX_BODY:
            violations.append(f"body is {len(request.body)} bytes, more than {APNS_MAX_BODY}")
        payload = self.parse_body(request, record, required=True)
        if payload is None:
            return
        if not isinstance(payload, dict):
            violations.append(f"body is a JSON {json_type(payload)}, not an object")
            return
        if not isinstance(payload.get("aps"), dict):
            violations.append("aps is not an object")
        session = payload.get("sessionId")
        if not isinstance(session, str) or not session:
            violations.append("sessionId is not a non-empty string")
        check_call_fields(payload, violations, "", as_strings=False)

    # OAuth ---------------------------------------------------------------

    def oauth(self, request, record):
        record["kind"] = "oauth"
        violations = record["violations"]
        before = len(violations)
        record["rawBody"] = request.body.decode("utf-8", "replace")
        content_type = request.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
            violations.append(f"content-type {content_type!r} is not application/x-www-form-urlencoded")
        try:
            form = urllib.parse.parse_qs(record["rawBody"], keep_blank_values=True, strict_parsing=True)
        except ValueError as error:
            violations.append(f"body is not a form: {error}")
            form = {}
        fields = {}
        for name in ("grant_type", "assertion"):
            values = form.get(name, [])
            if len(values) != 1:
                violations.append(f"form field {name} appears {len(values)} times, not once")
            else:
                fields[name] = values[0]
        if "grant_type" in fields and fields["grant_type"] != JWT_BEARER:
            violations.append(f"grant_type {fields['grant_type']!r} is not {JWT_BEARER}")
        if "assertion" in fields:
            self.check_assertion(fields["assertion"], request.received_at, record)
        if len(violations) > before:
            return json_answer(400, {"error": "invalid_grant", "error_description": "; ".join(violations[before:])})
        self.issued += 1
        token = f"mock-access-{self.issued}"
        self.access_tokens[token] = request.received_at + self.args.access_token_lifetime
        return json_answer(200, {"access_token": token, "expires_in": self.args.access_token_lifetime,
                                 "token_type": "Bearer"})

    def check_assertion(self, assertion, now, record):
        violations = record["violations"]
        jwt = parse_jwt(assertion, violations)
        if jwt is None:
            return
        record["jwt"] = {"header": jwt.header, "claims": jwt.claims}
        claims = jwt.claims
        if jwt.header.get("alg") != "RS256":
            violations.append(f"JWT alg {jwt.header.get('alg')!r} is not RS256")
        if "kid" in jwt.header and not isinstance(jwt.header["kid"], str):
            violations.append("JWT kid is not a string")
        if claims.get("iss") != self.args.fcm_client_email:
            violations.append(f"JWT iss {claims.get('iss')!r} is not {self.args.fcm_client_email!r}")
        if claims.get("scope") != FCM_SCOPE:
            violations.append(f"JWT scope {claims.get('scope')!r} is not {FCM_SCOPE}")
        audiences = [f"https://{host}:{self.port}/token" for host in ("127.0.0.1", "localhost")]
        if claims.get("aud") not in audiences:
            violations.append(f"JWT aud {claims.get('aud')!r} is not {audiences[0]} (or localhost)")
        iat, exp = claims.get("iat"), claims.get("exp")
        if not is_integer(iat):
            violations.append(f"JWT iat {iat!r} is not an integer")
        elif abs(iat - now) > 60:
            violations.append(f"JWT iat {iat} is more than 60 s from now ({int(now)})")
        if not is_integer(exp):
            violations.append(f"JWT exp {exp!r} is not an integer")
        elif is_integer(iat) and not 0 < exp - iat <= 3600:
            violations.append(f"JWT exp - iat is {exp - iat} s, not in 1...3600")
        try:
            self.fcm_key.verify(jwt.signature, jwt.signing_input, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            violations.append("RS256 signature does not verify with the service account's public key")

    # FCM -----------------------------------------------------------------

    def fcm(self, request, record, project):
        record["kind"] = "fcm"
        violations = record["violations"]
        body = self.parse_body(request, record, required=True)
        message = body.get("message") if isinstance(body, dict) else None
        if isinstance(message, dict) and isinstance(message.get("token"), str):
            record["token"] = message["token"]
        unauthenticated = self.check_access_token(request, violations)
        self.check_fcm_message(body, violations)
        if unauthenticated:
            return json_answer(401, {"error": {"code": 401, "status": "UNAUTHENTICATED",
                                               "message": unauthenticated}})
        if project != self.args.fcm_project:
            violations.append(f"project {project!r} is not {self.args.fcm_project!r}")
            return fcm_error(403, "SENDER_ID_MISMATCH", f"SenderId mismatch: project {project}", [])
        scripted = self.scripted(record["token"])
        if scripted and scripted["status"] != 200:
            return fcm_error(scripted["status"], scripted.get("fcmError"), "scripted answer for this token",
                             retry_after(scripted))
        self.sent += 1
        return json_answer(200, {"name": f"projects/{project}/messages/{self.sent}"})

    def check_access_token(self, request, violations):
        """None when `authorization` holds a live token this mock issued,
        else why not (also appended to the violations)."""
        before = len(violations)
        credentials = bearer(request, violations, "Bearer")
        if credentials is not None:
            expiry = self.access_tokens.get(credentials)
            if expiry is None:
                violations.append("access token was not issued by this mock")
            elif expiry <= request.received_at:
                violations.append("access token has expired")
        return violations[before] if len(violations) > before else None

    @staticmethod
    def check_fcm_message(body, violations):
        if body is None:
            return
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, dict):
            violations.append("body has no message object")
            return
        if not isinstance(message.get("token"), str) or not message["token"]:
            violations.append("message.token is not a non-empty string")
        android = message.get("android")
        if not isinstance(android, dict):
            violations.append("message.android is not an object")
        else:
            # FCM takes the enum's name in either case; ringd's contract is "high".
            if android.get("priority") not in ("high", "HIGH"):
                violations.append(f"message.android.priority {android.get('priority')!r} is not 'high'")
            ttl = android.get("ttl")
            if not isinstance(ttl, str) or not TTL.fullmatch(ttl):
                violations.append(f"message.android.ttl {ttl!r} is not '<digits>s'")
        data = message.get("data")
        if not isinstance(data, dict):
            violations.append("message.data is not an object")
            return
        for key, value in data.items():
            if not isinstance(value, str):
                violations.append(f"message.data.{key} is a {json_type(value)}, not a string")
        kind = data.get("type")
        if kind not in FCM_TYPES:
            violations.append(f"message.data.type {kind!r} is not incoming_call or call_cancelled")
        session = data.get("sessionId")
        if not isinstance(session, str) or not session:
            violations.append("message.data.sessionId is not a non-empty string")
        if kind == "incoming_call":
            check_call_fields(data, violations, "message.data.", as_strings=True)


def fcm_error(status, error_code, message, headers):
    """An error in Google's shape, with the FcmError detail when there is one."""
    error = {"code": status, "message": message, "status": FCM_STATUSES.get(status, "UNKNOWN")}
    error_code = error_code or FCM_ERRORS.get(status)
    if error_code:
        error["details"] = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                             "errorCode": error_code}]
    return json_answer(status, {"error": error}, headers)


def retry_after(answer):
    seconds = answer.get("retryAfter")
    return [] if seconds is None else [("retry-after", str(seconds))]


def load_public_key(path, kind):
    with open(path, "rb") as file:
        key = serialization.load_pem_public_key(file.read())
    if not isinstance(key, kind):
        sys.exit(f"mock_push: {path} is not a {kind.__name__}")
    if isinstance(key, ec.EllipticCurvePublicKey) and not isinstance(key.curve, ec.SECP256R1):
        sys.exit(f"mock_push: {path} is not a P-256 key")
    return key


def load_script(path):
    """{token: [answer, ...]} and the "*" list (None when there is none)."""
    if path is None:
        return {}, None
    with open(path, encoding="utf-8") as file:
        script = json.load(file)
    valid = isinstance(script, dict) and all(
        isinstance(answers, list) and all(isinstance(a, dict) and is_integer(a.get("status")) for a in answers)
        for answers in script.values())
    if not valid:
        sys.exit(f"mock_push: {path} is not {{token: [{{\"status\": N, ...}}, ...]}}")
    wildcard = script.pop("*", None)
    return {token: list(answers) for token, answers in script.items()}, wildcard


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
