"""Checks ringd's published contract, docs/openapi.yaml and docs/asyncapi.yaml.

1. docs/openapi.yaml is a valid OpenAPI 3.1 document (openapi-spec-validator)
   with an operation for every route Sources/SignalServer adds (`table.add`)
   and none for a route it does not.
2. docs/asyncapi.yaml is a valid AsyncAPI 3.0.0 document: checked against the
   official JSON Schema, vendored as asyncapi-3.0.0.schema.json (from
   https://github.com/asyncapi/spec-json-schemas, schemas/3.0.0.json, commit
   7dd3990d9fff9df76e81c8d2ab544e0000f29aff, Apache-2.0; no PyPI package ships
   it), then every local $ref resolves, and the schemas both documents define
   (Call, CallLog, PushToken, MediaToken…) are the same in both.
3. Every example in docs/PROTOCOL.md validates: the ```json frames against
   their AsyncAPI message, the HTTP transcripts and the `200 {…}` answers in the
   prose against their OpenAPI operation, and docs/TEST-API.md's tap record
   against TransitionRecord. An example that elides something with "…" and so
   does not validate is listed as elided, not failed; any other one that does
   not validate fails the check.

Prints what it checked and exits non-zero on any failure.
"""

import json
import re
import sys
from pathlib import Path

import jsonschema
import yaml
from openapi_spec_validator import validate as validate_openapi
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7, DRAFT202012

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OPENAPI_URI = "urn:ringd:openapi"
ASYNCAPI_URI = "urn:ringd:asyncapi"

CLIENT_TYPES = {
    "auth", "initiateCall", "acceptCall", "rejectCall", "cancelCall", "endCall", "getActiveCall",
    "getCallLogs", "registerPushToken", "unregisterPushToken", "signal", "getIceServers", "getMediaToken",
    "setDoNotDisturb",
}
# Which result message answers which request.
RESULT_OF = {
    "auth": "authResult", "initiateCall": "initiateCallResult", "acceptCall": "callResult",
    "rejectCall": "callResult", "cancelCall": "callResult", "endCall": "callResult",
    "getActiveCall": "activeCallResult", "getCallLogs": "callLogsResult",
    "registerPushToken": "pushTokenResult", "unregisterPushToken": "pushTokenRemovedResult",
    "signal": "signalResult", "getIceServers": "iceServersResult", "getMediaToken": "mediaTokenResult",
    "setDoNotDisturb": "doNotDisturbResult",
}
# Examples in the docs that the code refuses: reported, not failed, until the
# docs are fixed (then the entry goes). Keyed by a piece of the example.
KNOWN_DISAGREEMENTS: dict[str, str] = {}


class Report:
    def __init__(self):
        self.failures = []

    def fail(self, what):
        self.failures.append(what)
        print(f"FAIL {what}")

    def ok(self, what):
        print(f"ok   {what}")


def load(path):
    with open(path, encoding="utf-8") as file:
        return yaml.safe_load(file)


def first_error(validator, instance):
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"at {where}: {error.message[:300]}"


class Documents:
    def __init__(self):
        self.openapi = load(ROOT / "docs" / "openapi.yaml")
        self.asyncapi = load(ROOT / "docs" / "asyncapi.yaml")
        self.registry = Registry().with_resources([
            (OPENAPI_URI, Resource.from_contents(self.openapi, default_specification=DRAFT202012)),
            (ASYNCAPI_URI, Resource.from_contents(self.asyncapi, default_specification=DRAFT7)),
        ])

    def openapi_validator(self, pointer):
        """A validator for the schema at `pointer` (JSON pointer) in the OpenAPI document."""
        return jsonschema.Draft202012Validator({"$ref": f"{OPENAPI_URI}#{pointer}"}, registry=self.registry)

    def asyncapi_validator(self, pointer):
        return jsonschema.Draft7Validator({"$ref": f"{ASYNCAPI_URI}#{pointer}"}, registry=self.registry)

    def message_validator(self, name):
        """The payload schema of AsyncAPI message `name`."""
        payload = self.asyncapi["components"]["messages"][name]["payload"]
        return jsonschema.Draft7Validator(
            {"$ref": f"{ASYNCAPI_URI}{payload['$ref']}"} if "$ref" in payload else payload,
            registry=self.registry)

    def operation(self, method, path):
        """The OpenAPI path template and operation serving `method` `path` (no query)."""
        for template, item in self.openapi["paths"].items():
            pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
            if re.match(pattern, path) and method.lower() in item:
                return template, item[method.lower()]
        return None, None

    def response_validator(self, template, method, status):
        """A validator for the JSON body of `status` from the operation, or None when it has none."""
        escaped = template.replace("~", "~0").replace("/", "~1")
        response = self.openapi["paths"][template][method.lower()]["responses"].get(str(status))
        if response is None:
            return None, f"{method} {template} documents no {status}"
        pointer = f"/paths/{escaped}/{method.lower()}/responses/{status}"
        if "$ref" in response:
            pointer = response["$ref"][1:]
            response = self.resolve(response["$ref"])
        if "application/json" not in response.get("content", {}):
            return None, None
        return self.openapi_validator(pointer + "/content/application~1json/schema"), None

    def request_validator(self, template, method):
        escaped = template.replace("~", "~0").replace("/", "~1")
        body = self.openapi["paths"][template][method.lower()].get("requestBody")
        if body is None or "application/json" not in body.get("content", {}):
            return None
        return self.openapi_validator(f"/paths/{escaped}/{method.lower()}/requestBody/content/application~1json/schema")

    def resolve(self, ref, document=None):
        node = self.openapi if document is None else document
        for part in ref.lstrip("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node


def check_openapi(docs, report):
    try:
        validate_openapi(docs.openapi)
        report.ok(f"docs/openapi.yaml is valid OpenAPI {docs.openapi['openapi']} "
                  f"({sum(len([m for m in item if m in ('get', 'put', 'post', 'delete')]) for item in docs.openapi['paths'].values())} operations)")
    except Exception as error:  # the validator's own error types
        report.fail(f"docs/openapi.yaml is not valid OpenAPI: {str(error)[:500]}")


def check_routes(docs, report):
    """Every `table.add(METHOD, PATH)` in Sources/SignalServer is an operation of docs/openapi.yaml, and back."""
    served = set()
    for source in sorted((ROOT / "Sources" / "SignalServer").rglob("*.swift")):
        text = source.read_text(encoding="utf-8")
        for method, path in re.findall(r'table\.add\("(\w+)", ("[^"]*"|\w+)\)', text):
            if not path.startswith('"'):
                constant = re.search(rf'let {path} = "([^"]*)"', text)
                if constant is None:
                    report.fail(f"{source.relative_to(ROOT)}: cannot tell the path of table.add(\"{method}\", {path})")
                    continue
                path = constant.group(1)
            served.add((method, path.strip('"')))
    documented = {(method.upper(), path) for path, item in docs.openapi["paths"].items()
                  for method in item if method in ("get", "put", "post", "delete", "patch", "head", "options")}
    if served - documented:
        report.fail(f"routes ringd serves that docs/openapi.yaml lacks: {sorted(served - documented)}")
    if documented - served:
        report.fail(f"operations of docs/openapi.yaml that no route serves: {sorted(documented - served)}")
    if served == documented:
        report.ok(f"docs/openapi.yaml has every one of the {len(served)} routes in Sources/SignalServer, and no other")


def local_refs(node, found):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.append(value)
            else:
                local_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            local_refs(value, found)
    return found


def check_asyncapi(docs, report):
    with open(HERE / "asyncapi-3.0.0.schema.json", encoding="utf-8") as file:
        schema = json.load(file)
    error = first_error(jsonschema.Draft7Validator(schema), docs.asyncapi)
    if error:
        report.fail(f"docs/asyncapi.yaml breaks the AsyncAPI 3.0.0 JSON Schema {error}")
    else:
        report.ok("docs/asyncapi.yaml is valid against the official AsyncAPI 3.0.0 JSON Schema")
    for name, document in (("openapi", docs.openapi), ("asyncapi", docs.asyncapi)):
        broken = []
        for ref in local_refs(document, []):
            try:
                docs.resolve(ref, document)
            except (KeyError, TypeError):
                broken.append(ref)
        if broken:
            report.fail(f"docs/{name}.yaml has $refs that resolve to nothing: {sorted(set(broken))}")
        else:
            report.ok(f"every $ref in docs/{name}.yaml resolves")
    signaling = ROOT / "Sources" / "Protocol" / "Signaling"
    enum = re.search(r"enum RequestType\b.*?\{(.*?)\n\}", (signaling / "ClientRequest.swift").read_text(), re.S)
    request_types = set(re.findall(r"\w+", " ".join(re.findall(r"case ([^\n]+)", enum.group(1)))))
    messages = set(docs.asyncapi["components"]["messages"])
    if request_types != CLIENT_TYPES or not request_types <= messages:
        report.fail(f"the request types of ClientRequest.swift {sorted(request_types)} are not the messages "
                    f"of docs/asyncapi.yaml (missing: {sorted(request_types - messages)})")
    else:
        report.ok(f"docs/asyncapi.yaml has a message for each of the {len(request_types)} request types")
    codes = set(re.findall(r'SignalErrorCode\(rawValue: "(\w+)"\)', (signaling / "SignalError.swift").read_text()))
    documented = set(docs.asyncapi["components"]["schemas"]["SignalErrorCode"]["enum"])
    if codes != documented:
        report.fail(f"SignalError.swift's codes and docs/asyncapi.yaml's differ: only in the code "
                    f"{sorted(codes - documented)}, only in the document {sorted(documented - codes)}")
    else:
        report.ok(f"docs/asyncapi.yaml names the {len(codes)} error codes of SignalError.swift")
    shared = set(docs.openapi["components"]["schemas"]) & set(docs.asyncapi["components"]["schemas"])
    differ = sorted(name for name in shared
                    if docs.openapi["components"]["schemas"][name] != docs.asyncapi["components"]["schemas"][name])
    if differ:
        report.fail(f"schemas defined differently in the two documents: {differ}")
    else:
        report.ok(f"{len(shared)} schemas are the same in both documents: {', '.join(sorted(shared))}")


def blocks(text):
    """Each fenced block of `text`: (language, body, the text before it)."""
    for match in re.finditer(r"^( *)```(\w*)\n(.*?)^\1```", text, re.S | re.M):
        body = "\n".join(line[len(match.group(1)):] for line in match.group(3).splitlines())
        yield match.group(2), body, text[:match.start()]


def last_route(before):
    """The `METHOD /path` the last heading before an example names, if it names one."""
    headings = re.findall(r"^#+ .*$", before, re.M)
    route = re.match(r"#+ `(GET|POST|PUT|DELETE) (/[^`?\s]*)", headings[-1]) if headings else None
    return (route.group(1), route.group(2)) if route else None


class Examples:
    def __init__(self, docs, report):
        self.docs, self.report = docs, report
        self.valid, self.elided, self.unmatched, self.known = 0, [], [], []
        self.last_request_type = {}

    def judge(self, label, validator, instance, source):
        error = first_error(validator, instance)
        if error is None:
            self.valid += 1
            self.report.ok(label)
        elif any(key in source for key in KNOWN_DISAGREEMENTS):
            why = next(why for key, why in KNOWN_DISAGREEMENTS.items() if key in source)
            self.known.append(label)
            print(f"KNOWN {label}: the doc disagrees with the code: {why}")
        elif "…" in source:
            self.elided.append(f"{label} ({error})")
            print(f"elid {label}: elided with …, does not validate {error}")
        else:
            self.report.fail(f"{label} {error}\n     {source[:300]}")

    def frame(self, where, source, value):
        kind = value.get("type")
        if kind in CLIENT_TYPES and "ok" not in value and "from" not in value:
            if isinstance(value.get("id"), str):
                self.last_request_type[value["id"]] = kind
            self.judge(f"{where} client frame {kind}", self.docs.message_validator(kind), value, source)
        elif kind == "result":
            if value.get("ok") is False:
                name = "errorResult"
            elif value.get("id") is None:
                name = "authResult"
            else:
                name = RESULT_OF.get(self.last_request_type.get(value.get("id")))
            if name is None:
                self.unmatched.append(f"{where}: a result to no request in the document")
                return
            self.judge(f"{where} server frame {name}", self.docs.message_validator(name), value, source)
        elif kind == "call":
            self.judge(f"{where} server frame callEvent", self.docs.message_validator("callEvent"), value, source)
        elif kind == "signal" and "from" in value:
            self.judge(f"{where} server frame peerSignal", self.docs.message_validator("peerSignal"), value, source)
        else:
            return False
        return True

    def rest_json(self, where, value, source):
        """A JSON example in the REST section that is an answer's body, matched by its members."""
        keys = set(value)
        if {"lastOutcome", "lastAt", "counts"} <= keys:
            self.judge(f"{where} PushState", self.docs.openapi_validator("/components/schemas/PushState"), value, source)
        elif keys == {"delivered", "status", "error"}:
            self.response(where, "POST", "/v1/webhooks/test", 200, value, source)
        elif keys == {"clock", "fired"}:
            self.response(where, "POST", "/v1/test/clock/advance", 200, value, source)
        elif {"seq", "committed", "input", "changes", "actions"} <= keys:
            self.judge(f"{where} TransitionRecord",
                       self.docs.openapi_validator("/components/schemas/TransitionRecord"), value, source)
            self.judge(f"{where} tap message transition", self.docs.message_validator("transition"), value, source)
        else:
            self.unmatched.append(f"{where}: {source[:80]}")

    def response(self, where, method, path, status, value, source):
        template, operation = self.docs.operation(method, path)
        if operation is None:
            self.report.fail(f"{where}: {method} {path} is in no path of docs/openapi.yaml")
            return
        validator, missing = self.docs.response_validator(template, method, status)
        if missing:
            self.report.fail(f"{where}: {missing}")
        elif validator is not None:
            self.judge(f"{where} {method} {template} → {status}", validator, value, source)

    def http(self, where, body, before, request):
        """An HTTP transcript: a request (returned, for the response after it) or a response."""
        head, _, payload = body.partition("\n\n")
        first = head.splitlines()[0]
        request_line = re.match(r"(GET|POST|PUT|DELETE) (\S+) HTTP/1\.[01]$", first)
        status_line = re.match(r"HTTP/1\.[01] (\d{3}) ", first)
        value = None
        if payload.strip():
            try:
                value = json.loads(payload)
            except ValueError:
                value = None
        if request_line:
            method, path = request_line.group(1), request_line.group(2).split("?")[0]
            template, operation = self.docs.operation(method, path)
            if operation is None:
                self.report.fail(f"{where}: {method} {path} is in no path of docs/openapi.yaml")
            elif value is not None:
                validator = self.docs.request_validator(template, method)
                if validator is None:
                    self.report.fail(f"{where}: {method} {template} documents no JSON request body")
                else:
                    self.judge(f"{where} {method} {template} request body", validator, value, payload)
            return (method, path)
        if status_line:
            status = int(status_line.group(1))
            route = request or last_route(before)
            if value is None:
                return None
            if route is None:
                # The HTTP layer's own answers (TLS, the errors table): the error body.
                self.judge(f"{where} error body {status}", self.docs.openapi_validator("/components/schemas/Error"),
                           value, payload)
            else:
                self.response(where, route[0], route[1], status, value, payload)
        return None

    def prose(self, name, text, start):
        """`200 {…}` answers in the prose from `start` on, for the last `METHOD /path` named before them."""
        route = None
        # Fenced blocks blanked out and lines joined, offsets kept.
        flat = re.sub(r"```.*?```", lambda block: re.sub(r"[^\n]", " ", block.group(0)), text, flags=re.S)
        flat = flat.replace("\n", " ")
        pattern = r"`(GET|POST|PUT|DELETE)(?: (/[^`\s?]*))?[^`]*`|`(\d{3}) (\{.*?\})`"
        for match in re.finditer(pattern, flat[start:]):
            if match.group(1):
                route = (match.group(1), match.group(2) or (route[1] if route else None))
                continue
            line = text.count("\n", 0, start + match.start()) + 1
            try:
                value = json.loads(match.group(4))
            except ValueError:
                continue  # a shape with names (`{"pushToken":PushToken}`), not an example
            if route is None or route[1] is None:
                self.unmatched.append(f"{name}:{line}: {match.group(0)[:80]}")
                continue
            self.response(f"{name}:{line}", route[0], route[1], int(match.group(3)), value, match.group(4))


def check_examples(docs, report):
    examples = Examples(docs, report)
    not_json = 0
    for name in ("PROTOCOL.md", "TEST-API.md"):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        rest = text.find("# REST API") if name == "PROTOCOL.md" else 0
        request = None
        for language, body, before in blocks(text):
            where = f"{name}:{before.count(chr(10)) + 1}"
            # A response pairs with the request in the block just before it only.
            request, previous = None, request
            if language == "json":
                try:
                    value = json.loads(body)
                except ValueError:
                    not_json += 1
                    examples.elided.append(f"{where}: not JSON ({body.strip()[:60]})")
                    print(f"elid {where}: not JSON, elided with …: {body.strip()[:60]}")
                    continue
                if not examples.frame(where, body, value):
                    examples.rest_json(where, value, body)
            elif language == "" and name == "PROTOCOL.md" and len(before) > rest and re.match(
                    r"(GET|POST|PUT|DELETE) \S+ HTTP/|HTTP/1\.[01] \d{3}", body):
                request = examples.http(where, body, before, previous)
        if name == "PROTOCOL.md":
            examples.prose(name, text, rest)
    for entry in examples.unmatched:
        print(f"skip {entry}: matched to no schema")
    print(f"examples: {examples.valid} validated, {len(examples.elided)} elided ({not_json} not JSON), "
          f"{len(examples.known)} known to disagree with the code, {len(examples.unmatched)} unmatched, "
          f"{len(report.failures)} failures so far")
    return examples


def main():
    report = Report()
    docs = Documents()
    check_openapi(docs, report)
    check_routes(docs, report)
    check_asyncapi(docs, report)
    check_examples(docs, report)
    if report.failures:
        print(f"{len(report.failures)} failed")
        return 1
    print("the contract checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
