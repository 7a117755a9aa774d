// ringd-client.js in Node against a real `ringd --ephemeral` (docs/WEB.md):
// two clients ring, acknowledge, accept, signal and end; a client whose
// socket drops resumes with nothing lost; an initiateCall whose result was
// lost is sent again and answers the same call. The module is the one ringd
// serves at /client/ringd-client.js. Node has no WebSocket of its own before
// 22: Debian's node-ws (`ws`) is passed in. RINGD names the binary.

import {test, before, after} from "node:test";
import assert from "node:assert/strict";
import {spawn} from "node:child_process";
import {createRequire} from "node:module";
import {mkdtempSync, writeFileSync, rmSync, existsSync} from "node:fs";
import {tmpdir} from "node:os";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";
import {createInterface} from "node:readline";

const require = createRequire(import.meta.url);
// Debian's node finds /usr/share/nodejs by itself; other builds of node need NODE_PATH or this.
const WS = (() => {
  try {
    return require("ws");
  } catch {
    return require("/usr/share/nodejs/ws");
  }
})();

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const RINGD = process.env.RINGD || path.join(ROOT, ".build/debug/ringd");
const AUTH_KEY = "ringd-dev-auth-key";
const FAST = {firstDelayMs: 20, maxDelayMs: 100};

let ringd, url, module, scratch;

before(async () => {
  assert.ok(existsSync(RINGD), `no ringd at ${RINGD}: build it first`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("RINGD")));
  ringd = spawn(RINGD, ["--ephemeral"], {env, stdio: ["ignore", "pipe", "ignore"]});
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("ringd did not start in 10 s")), 10_000);
    createInterface({input: ringd.stdout}).once("line", (text) => {
      clearTimeout(timer);
      resolve(text);
    });
    ringd.once("exit", (code) => reject(new Error(`ringd exited with ${code}`)));
  });
  assert.match(line, /^listening ws:\/\//);
  const address = line.split("ws://")[1].trim();
  url = `ws://${address}/v1/ws`;
  // The served module, as an app would fetch it; .mjs so that Node reads it as an ES module.
  const response = await fetch(`http://${address}/client/ringd-client.js`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /^text\/javascript/);
  scratch = mkdtempSync(path.join(tmpdir(), "ringd-client-"));
  writeFileSync(path.join(scratch, "ringd-client.mjs"), await response.text());
  module = await import(pathToFileURL(path.join(scratch, "ringd-client.mjs")).href);
});

after(() => {
  ringd?.kill("SIGTERM");
  if (scratch) rmSync(scratch, {recursive: true, force: true});
});

/**
 * A WebSocket class around ws that records every frame, can hold the next
 * connection until `gate` resolves, and can drop the connection when a
 * received frame matches `dropOn` (that frame never reaches the client).
 */
function recordingSocket(control) {
  Object.assign(control, {sent: [], received: [], current: null, gate: null, dropOn: null});
  return class RecordingSocket {
    constructor(address) {
      const start = () => {
        const ws = new WS(address);
        this.ws = ws;
        control.current = ws;
        ws.onopen = (event) => this.onopen?.(event);
        ws.onclose = (event) => this.onclose?.(event);
        ws.onerror = (event) => this.onerror?.(event);
        ws.onmessage = (event) => {
          const frame = JSON.parse(event.data);
          control.received.push(frame);
          if (control.dropOn?.(frame)) {
            control.dropOn = null;
            ws.terminate();
            return;
          }
          this.onmessage?.(event);
        };
      };
      if (control.gate) control.gate.then(start);
      else start();
    }

    send(text) {
      control.sent.push(JSON.parse(text));
      this.ws.send(text);
    }

    close(code, reason) {
      this.ws?.close(code, reason);
    }
  };
}

async function client(uid, control = {}) {
  const ringdClient = new module.RingdClient({url, reconnect: FAST, requestTimeoutMs: 5000,
                                              WebSocket: recordingSocket(control)});
  await ringdClient.login({uid, authKey: AUTH_KEY}, {deviceId: `${uid}-device`});
  return ringdClient;
}

/** The next `name` event of `ringdClient` whose detail passes `matches`. */
function next(ringdClient, name, matches = () => true, ms = 5000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no ${name} event in ${ms} ms`));
    }, ms);
    const stop = ringdClient.on(name, (detail) => {
      if (!matches(detail)) return;
      clearTimeout(timer);
      stop();
      resolve(detail);
    });
  });
}

function unique(name) {
  return `${name}-${Math.random().toString(16).slice(2, 10)}`;
}

test("two clients ring, acknowledge, accept, signal and end with one session id", async () => {
  const [aliceId, bobId] = [unique("alice"), unique("bob")];
  const alice = await client(aliceId);
  const bob = await client(bobId);
  try {
    assert.equal(alice.state, "connected");
    const incoming = next(bob, "call", (call) => call.status === "initiated");
    const placed = await alice.initiateCall(bobId, "video", {metadata: {topic: "node"}});
    assert.equal(placed.status, "initiated");
    assert.match(placed.clientCallId, /^[0-9a-f]{32}$/);
    const rung = await incoming;
    assert.equal(rung.sessionId, placed.sessionId);
    assert.deepEqual(rung.metadata, {topic: "node"});

    const heardRinging = next(alice, "call", (call) => (call.ringingDevices || []).length > 0);
    await bob.ringing(placed.sessionId);
    assert.deepEqual((await heardRinging).ringingDevices, [`${bobId}-device`]);

    const accepted = next(alice, "call", (call) => call.status === "ongoing");
    const mine = await bob.acceptCall(placed.sessionId);
    assert.equal(mine.sessionId, placed.sessionId);
    assert.equal((await accepted).acceptedBy, `${bobId}-device`);

    const heard = next(bob, "signal");
    assert.equal(await alice.signal(placed.sessionId, {kind: "offer", sdp: "v=0"}), true);
    const signal = await heard;
    assert.equal(signal.sessionId, placed.sessionId);
    assert.deepEqual(signal.payload, {kind: "offer", sdp: "v=0"});
    assert.equal(signal.from.uid, aliceId);

    const ended = next(alice, "call", (call) => call.status === "ended");
    assert.equal((await bob.endCall(placed.sessionId)).status, "ended");
    assert.equal((await ended).endedBy, bobId);
    assert.equal(await alice.activeCall(), null);
    const {logs} = await alice.callLogs({limit: 5});
    assert.deepEqual(logs.map((log) => log.sessionId), [placed.sessionId]);
  } finally {
    alice.close();
    bob.close();
  }
});

test("a dropped client resumes after its last seq and hears the end it missed", async () => {
  const [aliceId, bobId] = [unique("alice"), unique("bob")];
  const bobSocket = {};
  const alice = await client(aliceId);
  const bob = await client(bobId, bobSocket);
  try {
    const incoming = next(bob, "call", (call) => call.status === "initiated");
    const call = await alice.initiateCall(bobId, "audio");
    await incoming;
    await bob.acceptCall(call.sessionId);
    const seqBefore = bob.lastSeq;
    const epoch = bob.epoch;
    assert.equal(typeof epoch, "string");

    // Bob's socket dies; his next connection waits until alice has hung up.
    let open;
    bobSocket.gate = new Promise((resolve) => (open = resolve));
    const reconnecting = next(bob, "connection", ({state}) => state === "reconnecting");
    bobSocket.current.terminate();
    await reconnecting;
    assert.equal(bob.state, "reconnecting");
    await assert.rejects(bob.activeCall(), {name: "RingdError", code: "CLIENT_CLOSED"});
    assert.equal((await alice.endCall(call.sessionId)).status, "ended");

    const back = next(bob, "connection", ({state}) => state === "connected");
    const missed = next(bob, "call", (change) => change.sessionId === call.sessionId && change.status === "ended");
    open();
    const {auth} = await back;
    assert.equal(auth.resumed, true);
    assert.equal((await missed).endedBy, aliceId);
    const resumeFrame = bobSocket.sent.filter((frame) => frame.type === "auth").at(-1);
    assert.deepEqual(resumeFrame.resume, {deviceId: `${bobId}-device`, afterSeq: seqBefore, epoch});
    assert.ok(bob.lastSeq > seqBefore);
  } finally {
    alice.close();
    bob.close();
  }
});

test("an initiateCall whose result was lost is sent again and answers the same call", async () => {
  const [aliceId, bobId] = [unique("alice"), unique("bob")];
  const aliceSocket = {};
  const alice = await client(aliceId, aliceSocket);
  const bob = await client(bobId);
  try {
    // The call is placed, but its result dies with alice's connection.
    aliceSocket.dropOn = (frame) => frame.type === "result" && frame.ok && frame.data && "ringing" in frame.data;
    const incoming = next(bob, "call", (call) => call.status === "initiated");
    const call = await alice.initiateCall(bobId, "audio");
    assert.equal((await incoming).sessionId, call.sessionId);

    const initiates = aliceSocket.sent.filter((frame) => frame.type === "initiateCall");
    assert.equal(initiates.length, 2);
    assert.equal(initiates[0].clientCallId, initiates[1].clientCallId);
    assert.equal(call.clientCallId, initiates[0].clientCallId);
    const results = aliceSocket.received.filter((frame) => frame.type === "result" && frame.data?.call);
    assert.deepEqual(results.map((frame) => [frame.data.call.sessionId, frame.data.replayed ?? false]),
                     [[call.sessionId, false], [call.sessionId, true]]);

    assert.equal((await alice.cancelCall(call.sessionId)).status, "cancelled");
    const {logs} = await bob.callLogs();
    assert.deepEqual(logs.map((log) => log.sessionId), [call.sessionId]);
  } finally {
    alice.close();
    bob.close();
  }
});

test("a refused login stops with ERR_AUTH_FAILED and does not reconnect", async () => {
  const refused = new module.RingdClient({url, reconnect: FAST, WebSocket: WS});
  const states = [];
  refused.on("connection", ({state, code}) => states.push([state, code]));
  await assert.rejects(refused.login({uid: unique("mallory"), authKey: "wrong"}),
                       {name: "RingdError", code: "ERR_AUTH_FAILED"});
  const stopped = states.at(-1)[0] === "disconnected" ? null : next(refused, "connection", ({state}) => state === "disconnected");
  await stopped;
  assert.deepEqual(states.at(-1), ["disconnected", 4001]);
  assert.equal(states.filter(([state]) => state === "reconnecting").length, 0);
});
