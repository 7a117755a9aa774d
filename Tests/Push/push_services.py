"""The three endpoints of the mock push server (Tests/Push/mock_push.py):
APNs, the OAuth token endpoint and FCM v1, as ``Mock``: what each checks
and answers, the --script, and the log. No network I/O here."""

import json
import sys
import urllib.parse
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from push_checks import (
    ALERT_TTL, APNS_MAX_ALERT_BODY, APNS_MAX_BODY, APNS_PATH, APNS_REASONS, Answer, CANONICAL_UUID, FCM_ERRORS,
    FCM_PATH, FCM_SCOPE, FCM_STATUSES, FCM_TYPES, HEX, JWT_BEARER, TTL, bearer, check_apns_alert,
    check_call_fields, check_fcm_notification, check_integer_header, is_integer, json_answer, json_type,
    parse_jwt, strict_json,
)

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
        """A VoIP ring (`voip`, topic `<bundle>.voip`, expiring within the
        hour) or a missed-call alert (`alert`, the bundle id, within a day)."""
        headers, now = request.headers, request.received_at
        push_type = headers.get("apns-push-type")
        if push_type not in ("voip", "alert"):
            violations.append(f"apns-push-type {push_type!r} is not 'voip' or 'alert'")
        if headers.get("apns-priority") != "10":
            violations.append(f"apns-priority {headers.get('apns-priority')!r} is not '10'")
        topic = headers.get("apns-topic")
        if push_type == "alert":
            if not topic or topic.endswith(".voip"):
                violations.append(f"apns-topic {topic!r} of an alert is not a bundle id")
        elif topic is None or not topic.endswith(".voip") or topic == ".voip":
            violations.append(f"apns-topic {topic!r} does not end with .voip")
        expiration = check_integer_header(request, "apns-expiration", violations)
        horizon = ALERT_TTL if push_type == "alert" else 3600
        if expiration is not None and not now < expiration < now + horizon:
            violations.append(f"apns-expiration {expiration} is not within the next {horizon} s (now {int(now)})")
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
        alert = request.headers.get("apns-push-type") == "alert"
        limit = APNS_MAX_ALERT_BODY if alert else APNS_MAX_BODY
        if len(request.body) > limit:
            violations.append(f"body is {len(request.body)} bytes, more than {limit}")
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
        if alert:
            check_apns_alert(payload, violations)
        else:
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
            violations.append(f"message.data.type {kind!r} is not one of {', '.join(FCM_TYPES)}")
        session = data.get("sessionId")
        if not isinstance(session, str) or not session:
            violations.append("message.data.sessionId is not a non-empty string")
        if kind == "incoming_call":
            check_call_fields(data, violations, "message.data.", as_strings=True)
        if kind == "missed_call":
            check_fcm_notification(message, data, violations)
        elif "notification" in message:
            violations.append(f"a {kind} message has a notification: Android would show it")


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
