"""What the mock push endpoints check (Tests/Push/mock_push.py): the shapes
of requests and answers, JWT parsing, and the checks shared by APNs, the
OAuth grant and FCM. Each check appends short strings to a request's
violations; none raises."""

import base64
import json
import re
from dataclasses import dataclass, field

APNS_PATH = re.compile(r"/3/device/([^/?#]*)")
FCM_PATH = re.compile(r"/v1/projects/([^/?#]+)/messages:send")
HEX = re.compile(r"[0-9A-Fa-f]+")
CANONICAL_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
DIGITS = re.compile(r"[0-9]+")
TTL = re.compile(r"[0-9]+s")

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
APNS_MAX_BODY = 5120  # a VoIP push
APNS_MAX_ALERT_BODY = 4096  # any other push
ALERT_TTL = 86400 + 60  # a missed-call alert's expiration, with a minute of slack
CALL_TYPES = ("audio", "video")
FCM_TYPES = ("incoming_call", "call_cancelled", "missed_call")
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


def check_caller(fields, violations, prefix):
    """The caller fields every payload carries."""
    caller = fields.get("callerUid")
    if not isinstance(caller, str) or not caller:
        violations.append(f"{prefix}callerUid is not a non-empty string")
    if fields.get("callType") not in CALL_TYPES:
        violations.append(f"{prefix}callType {fields.get('callType')!r} is not audio or video")
    for key in ("callerName", "callerAvatarUrl"):
        value = fields.get(key)
        if value is not None and not isinstance(value, str):
            violations.append(f"{prefix}{key} is a {json_type(value)}, not a string")


def check_strings(container, keys, violations, prefix):
    """Each of `keys` in `container` is a non-empty string."""
    for key in keys:
        value = container.get(key)
        if not isinstance(value, str) or not value:
            violations.append(f"{prefix}{key} is not a non-empty string")


def check_string_list(value, violations, name):
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        violations.append(f"{name} is not a list of strings")


def check_apns_alert(payload, violations):
    """A missed-call alert's `aps`: the alert in English with its
    localization keys, and the sound."""
    aps = payload.get("aps")
    alert = aps.get("alert") if isinstance(aps, dict) else None
    if not isinstance(alert, dict):
        violations.append("aps.alert is not an object")
        return
    check_strings(alert, ("title", "body", "title-loc-key", "loc-key"), violations, "aps.alert.")
    check_string_list(alert.get("loc-args"), violations, "aps.alert.loc-args")
    if aps.get("sound") != "default":
        violations.append(f"aps.sound {aps.get('sound')!r} is not 'default'")
    if payload.get("type") != "missed_call":
        violations.append(f"type {payload.get('type')!r} is not 'missed_call'")
    check_caller(payload, violations, "")


def check_fcm_notification(message, data, violations):
    """A missed-call alert's notification and its Android part."""
    notification = message.get("notification")
    if not isinstance(notification, dict):
        violations.append("message.notification is not an object")
    else:
        check_strings(notification, ("title", "body"), violations, "message.notification.")
    android = message.get("android")
    shown = android.get("notification") if isinstance(android, dict) else None
    if not isinstance(shown, dict):
        violations.append("message.android.notification is not an object")
        return
    if shown.get("tag") != data.get("sessionId"):
        violations.append(f"message.android.notification.tag {shown.get('tag')!r} is not the session id")
    check_strings(shown, ("title_loc_key", "body_loc_key"), violations, "message.android.notification.")
    check_string_list(shown.get("body_loc_args"), violations, "message.android.notification.body_loc_args")
    check_caller(data, violations, "message.data.")
