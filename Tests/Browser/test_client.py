"""ringd-client.js alone in headless Chromium (docs/WEB.md): two plain pages
of another origin (an app's own server, here a second port on loopback)
that load only /client/ringd-client.js from ringd, no softphone, ring,
accept, signal and end one call with the same session id."""

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

AUTH_KEY = "ringd-dev-auth-key"


@pytest.fixture
def app_page(ringd):
    """The address of a page on another origin that imports the module from ringd (so through CORS)."""
    body = plain_page(ringd).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/" else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body) if self.path == "/" else 0))
            self.end_headers()
            if self.path == "/":
                self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def plain_page(ringd):
    """A page that imports the module from ringd and keeps every event it hears."""
    html = f"""<!doctype html><meta charset="utf-8"><title>loading</title><link rel="icon" href="data:,">
<script type="module">
import {{RingdClient}} from "{ringd.url}/client/ringd-client.js";
window.heard = [];
window.client = new RingdClient({{url: "{ringd.url.replace('http:', 'ws:')}/v1/ws"}});
for (const name of ["call", "signal", "connection"]) {{
  window.client.on(name, (detail) => window.heard.push({{name, detail}}));
}}
document.title = "ready";
</script>"""
    return html


class Client:
    """One plain page; run() awaits an async function body in it and returns its value."""

    def __init__(self, page):
        self.page = page
        page.wait(lambda: page.js("return document.title") == "ready", message="the module loaded")

    def run(self, body, *args):
        outcome = self.page.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"(async (...args) => {{ {body} }})(...Array.from(arguments).slice(0, -1))"
            ".then((value) => done({value}), (error) => done({error: `${error.code}: ${error.message}`}));",
            *args)
        assert "error" not in outcome, f"{self.page.name}: {outcome['error']}"
        return outcome.get("value")

    def wait_heard(self, name, predicate, message):
        """The first event `name` whose detail passes `predicate` (a JavaScript expression over `d`)."""
        script = f"return (window.heard.find((e) => e.name === {json.dumps(name)} && ((d) => {predicate})(e.detail)) || {{}}).detail"
        return self.page.wait(lambda: self.page.js(script), message=message)


def test_two_plain_pages_complete_a_call_with_the_module_alone(browser, ringd, app_page):
    alice_id, bob_id = f"alice-{secrets.token_hex(4)}", f"bob-{secrets.token_hex(4)}"
    alice = Client(browser("client-alice", address=app_page))
    bob = Client(browser("client-bob", address=app_page))
    assert alice.page.js("return typeof window.phone") == "undefined"  # no softphone here
    for client, uid in [(alice, alice_id), (bob, bob_id)]:
        auth = client.run("return client.login({uid: args[0], authKey: args[1]}, {deviceId: args[0] + '-tab'})",
                          uid, AUTH_KEY)
        assert auth["user"]["uid"] == uid
        assert client.page.js("return client.state") == "connected"

    call = alice.run("return client.initiateCall(args[0], 'video', {metadata: {from: 'browser'}})", bob_id)
    session_id = call["sessionId"]
    assert call["status"] == "initiated" and len(call["clientCallId"]) == 32
    rung = bob.wait_heard("call", "d.status === 'initiated'", "the ring")
    assert rung["sessionId"] == session_id and rung["metadata"] == {"from": "browser"}

    bob.run("return client.ringing(args[0])", session_id)
    shown = alice.wait_heard("call", "(d.ringingDevices || []).length > 0", "the ringing acknowledgement")
    assert shown["ringingDevices"] == [f"{bob_id}-tab"]

    accepted = bob.run("return client.acceptCall(args[0])", session_id)
    assert accepted["sessionId"] == session_id and accepted["status"] == "ongoing"
    ongoing = alice.wait_heard("call", "d.status === 'ongoing'", "the accept")
    assert ongoing["sessionId"] == session_id and ongoing["acceptedBy"] == f"{bob_id}-tab"

    assert alice.run("return client.signal(args[0], {kind: 'hello'})", session_id) is True
    signal = bob.wait_heard("signal", "true", "alice's signal")
    assert signal["sessionId"] == session_id and signal["payload"] == {"kind": "hello"}

    ended = alice.run("return client.endCall(args[0])", session_id)
    assert ended["status"] == "ended"
    heard_end = bob.wait_heard("call", "d.status === 'ended'", "the end")
    assert heard_end["sessionId"] == session_id and heard_end["endedBy"] == alice_id
    assert bob.run("return client.activeCall()") is None
    for client in (alice, bob):
        client.run("client.close(); return client.state")
        assert client.page.console_errors() == []
