"""The browser phone in two real browsers (docs/PHONE.md): alice and bob each
in a headless Chromium, ringing through ringd, media through the local
coturn's relay (?relay=1, so the minted TURN credentials are proven too).
Every wait is for a condition on the page, never a fixed sleep.

The tests share one ringd (reset only after a failure), so the video call,
last, has the rejected and the cancelled call in its log: its screenshots
show a page in use (docs/images/phone-call.png is one of them)."""

import time

import pytest

from conftest import AUTH_KEY

# The media's bytes: inbound-rtp bytesReceived by kind, and the type of the
# local candidate of the pair in use (relay, through coturn).
MEDIA_STATS = """
const done = arguments[arguments.length - 1];
const pc = window.phone.pc;
if (!pc) { done(null); return; }
pc.getStats().then((report) => {
  const bytes = {audio: 0, video: 0};
  let pair = null;
  report.forEach((s) => {
    if (s.type === "inbound-rtp") bytes[s.kind] = (bytes[s.kind] || 0) + (s.bytesReceived || 0);
    if (s.type === "transport" && s.selectedCandidatePairId) pair = report.get(s.selectedCandidatePairId);
  });
  const local = pair && report.get(pair.localCandidateId);
  const remote = pair && report.get(pair.remoteCandidateId);
  done({bytes, local: local ? local.candidateType : null, remote: remote ? remote.candidateType : null});
}, (error) => done({error: String(error)}));
"""


def sign_in(page, uid):
    page.type("uid", uid)
    page.type("auth-key", AUTH_KEY)
    page.click("sign-in-button")
    page.wait(lambda: page.js("return window.phone.connection") == "online", message="signed in")
    assert page.js("return window.phone.uid") == uid


def place_call(alice, bob, call_type="video"):
    alice.type("callee", "bob")
    alice.click("call-video" if call_type == "video" else "call-audio")
    bob.wait_state("incoming")
    session = bob.js("return window.phone.sessionId")
    assert alice.js("return window.phone.sessionId") == session
    assert "alice" in bob.text("call-title"), bob.text("call-title")
    bob.wait(lambda: bob.js("return document.body.dataset.ringing") == "ring", message="ring")
    alice.wait(lambda: alice.js("return document.body.dataset.ringing") == "ringback", message="ringback")
    # Bob's page showed the ring and said so: Alice's turns from "calling" to "ringing".
    alice.wait(lambda: alice.text("call-state").endswith("ringing"), message="ringing acknowledged")
    for page in (alice, bob):  # the tones' Web Audio context plays
        page.wait(lambda p=page: p.js("return window.phone.audio") == "running", message="audio running")
    assert alice.state() == "outgoing"
    return session


def log_row(page, session):
    return page.js("const row = document.querySelector(`#log-rows [data-session-id='${arguments[0]}']`);"
                   "return row ? {status: row.dataset.status, text: row.textContent} : null", session)


def no_console_errors(*pages):
    # A CSP violation (an inline style or script) shows up here as an error.
    for page in pages:
        errors = page.console_errors()
        assert not errors, f"{page.name}: {errors}"


@pytest.mark.parametrize("button, status, title", [("reject", "rejected", "bob declined"),
                                                  ("busy", "busy", "bob is busy")])
def test_bob_declines(browser, button, status, title):
    alice, bob = browser("alice"), browser("bob")
    sign_in(alice, "alice")
    sign_in(bob, "bob")
    session = place_call(alice, bob, "audio")

    bob.click(button)
    alice.wait_state(status)
    bob.wait_state(status)
    assert title in alice.text("call-title")
    for page in (alice, bob):
        assert page.js("return window.phone.pc") is None
        page.wait(lambda p=page: not p.js("return document.body.dataset.ringing"), message="silent")
        page.wait(lambda p=page: (log_row(p, session) or {}).get("status") == status, message="in the log")
    no_console_errors(alice, bob)


def test_alice_cancels_while_it_rings(browser):
    alice, bob = browser("alice"), browser("bob")
    sign_in(alice, "alice")
    sign_in(bob, "bob")
    session = place_call(alice, bob)

    alice.click("cancel")
    bob.wait_state("cancelled")
    alice.wait_state("cancelled")
    bob.wait(lambda: not bob.js("return document.body.dataset.ringing"), message="the ring stops")
    assert "Missed call from alice" in bob.text("call-title")
    bob.wait(lambda: (log_row(bob, session) or {}).get("status") == "cancelled", message="in bob's log")
    assert "missed" in log_row(bob, session)["text"]
    for page in (alice, bob):
        assert page.js("return window.phone.pc") is None
    no_console_errors(alice, bob)


def connected(*pages):
    for page in pages:
        page.wait(lambda p=page: p.js("return window.phone.pc && window.phone.pc.connectionState") == "connected",
                  seconds=10, message="RTCPeerConnection connected")


def media_flows(*pages, kinds=("audio", "video")):
    """Inbound bytes grow between two samples, through the TURN relay."""
    for page in pages:
        first = page.driver.execute_async_script(MEDIA_STATS)
        assert first and "error" not in first, first
        assert first["local"] == "relay", first  # ?relay=1: through coturn, with ringd's credentials
        page.wait(lambda p=page, f=first: (lambda s: all(s["bytes"][k] > f["bytes"][k] for k in kinds))(
            p.driver.execute_async_script(MEDIA_STATS)), message=f"inbound {kinds} bytes growing")


def test_the_call_survives_a_lost_connection_and_a_reload(browser, ringd):
    alice, bob = browser("alice"), browser("bob")
    sign_in(alice, "alice")
    sign_in(bob, "bob")
    session = place_call(alice, bob, "audio")
    bob.click("accept")
    connected(alice, bob)

    # Bob's network drops (a TCP reset): his page reconnects and resumes;
    # the media, which never went through ringd, flows on.
    before = bob.js("return window.phone.authentications")
    bob.js("document.getElementById('hang-up').focus()")
    ringd.api(f"/v1/test/devices/bob/{bob.js('return window.phone.deviceId')}/drop")
    bob.wait(lambda: bob.js("return window.phone.authentications") > before, message="reconnected")
    assert bob.state() == "ongoing" and bob.js("return window.phone.sessionId") == session
    assert bob.js("return document.activeElement.id") == "hang-up", "a reconnect leaves the focus alone"
    media_flows(alice, bob, kinds=("audio",))

    # Alice reloads: the tab signs in again as the same device, finds the
    # call ongoing, and negotiates a new connection with bob.
    bob.js("window.phone.pc.beforeReload = true")
    alice.driver.refresh()
    alice.wait(lambda: alice.js("return window.phone ? window.phone.connection : null") == "online", message="back")
    alice.wait_state("ongoing")
    assert alice.js("return window.phone.sessionId") == session
    bob.wait(lambda: bob.js("return !!window.phone.pc && !window.phone.pc.beforeReload"),
             message="a new connection for alice's new one")
    connected(alice, bob)
    media_flows(alice, bob, kinds=("audio",))

    bob.click("hang-up")
    for page in (alice, bob):
        page.wait_state("ended")
        page.wait(lambda p=page: p.js("return window.phone.pc") is None, message="connection closed")
    no_console_errors(alice, bob)


def test_a_video_call_connects_through_turn_and_hangs_up(browser, output_dir):
    alice, bob = browser("alice"), browser("bob")
    sign_in(alice, "alice")
    sign_in(bob, "bob")
    session = place_call(alice, bob)

    bob.click("accept")
    accepted = time.monotonic()
    for page in (alice, bob):
        page.wait_state("ongoing")
        assert not page.js("return document.body.dataset.ringing")
    connected(alice, bob)
    assert time.monotonic() - accepted < 10, "both connected within 10 s of the accept"
    media_flows(alice, bob)

    # Screenshots once both videos show frames.
    for page in (alice, bob):
        page.wait(lambda p=page: p.js(
            "return ['local-video', 'remote-video'].every((id) => {"
            "const v = document.getElementById(id); return v.readyState >= 2 && v.videoWidth > 0; })"),
            message="both videos playing")
        page.driver.save_screenshot(str(output_dir / f"{page.name}.png"))

    # Mute and camera off disable bob's tracks; the buttons say so.
    sending = "return window.phone.pc.getSenders().filter((s) => s.track).map((s) => [s.track.kind, s.track.enabled])"
    assert sorted(bob.js(sending)) == [["audio", True], ["video", True]]
    bob.click("mute")
    bob.click("camera")
    assert sorted(bob.js(sending)) == [["audio", False], ["video", False]]
    assert bob.js("return ['mute', 'camera'].map((id) => document.getElementById(id).getAttribute('aria-pressed'))") \
        == ["true", "true"]
    # Toggle buttons keep their label; aria-pressed says the state.
    assert [bob.text("mute"), bob.text("camera")] == ["Mute", "Camera off"]
    bob.click("mute")
    assert sorted(bob.js(sending)) == [["audio", True], ["video", False]]

    for page in (alice, bob):
        page.js("window.localTracks = document.getElementById('local-video').srcObject.getTracks()")
    alice.click("hang-up")
    for page in (alice, bob):
        page.wait_state("ended")
        page.wait(lambda p=page: p.js("return window.phone.pc") is None, message="connection closed")
        page.wait(lambda p=page: (log_row(p, session) or {}).get("status") == "ended", message="ended in the log")
        # The camera's light goes off: every local track stopped, the self view empty.
        assert page.js("return window.localTracks.length > 0 && window.localTracks.every((t) => t.readyState === 'ended')")
        assert page.js("return document.getElementById('local-video').srcObject") is None
    assert "alice hung up" in bob.text("call-state") and "You hung up" in alice.text("call-state")
    no_console_errors(alice, bob)


def test_a_second_tab_takes_the_call_and_the_first_lets_go(browser, ringd):
    alice, bob = browser("alice"), browser("bob")
    sign_in(alice, "alice")
    sign_in(bob, "bob")
    session = place_call(alice, bob, "audio")
    bob.click("accept")
    connected(alice, bob)

    # A second tab of alice's profile is the same device: it signs in, the
    # first is replaced (close code 4003), and the call's media moves over.
    first = alice.driver.current_window_handle
    alice.js("window.localTracks = window.phone.pc.getSenders().map((s) => s.track).filter(Boolean)")
    alice.driver.switch_to.new_window("tab")
    alice.driver.get(f"{ringd.url}/phone/?relay=1")
    sign_in(alice, "alice")
    alice.wait_state("ongoing")
    assert alice.js("return window.phone.sessionId") == session
    second = alice.driver.current_window_handle

    # The first tab lets go of the camera, microphone and peer connection.
    alice.driver.switch_to.window(first)
    alice.wait(lambda: alice.js("return window.phone.connection") == "offline", message="replaced")
    alice.wait_state("lost")
    assert alice.js("return window.phone.pc") is None and not alice.js("return document.body.dataset.ringing")
    assert alice.js("return window.localTracks.length > 0 && window.localTracks.every((t) => t.readyState === 'ended')")

    alice.driver.switch_to.window(second)
    connected(alice, bob)
    alice.click("hang-up")
    for page in (alice, bob):
        page.wait_state("ended")
    no_console_errors(alice, bob)
