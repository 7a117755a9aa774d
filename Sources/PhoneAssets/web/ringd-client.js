// ringd-client.js: the ringing protocol of ringd (docs/PROTOCOL.md) for web
// apps, React Native and Node, as one dependency-free ES module (docs/WEB.md).
// One WebSocket at /v1/ws, the auth frame, requests matched to their results
// by id, call and signal events, and reconnecting with backoff and resume
// (`auth.resume.afterSeq`) the way SignalClient and RingKit do.
//
// It uses only what browsers, React Native and Node 20 share: a WebSocket
// class (globalThis.WebSocket, or the `WebSocket` option: Node has none of its
// own, and the `ws` package fits), timers and JSON. No private `#fields` and
// no reliance on a global EventTarget, which older React Native engines lack.

const CLOSE_NOT_AUTHENTICATED = 4001;
const CLOSE_REPLACED = 4003;
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
// Backoff between reconnects: doubling from firstDelayMs up to maxDelayMs,
// each wait a random point in its upper half, so that the clients one server
// restart dropped do not all come back in the same millisecond.
const DEFAULT_BACKOFF = {firstDelayMs: 500, maxDelayMs: 15_000};
// How often an initiateCall is sent again with its clientCallId when the
// connection drops (or the server is silent) before its result came.
const INITIATE_ATTEMPTS = 3;

/** An error of the server (`ERR_…`) or of the client itself (`CLIENT_…`). */
export class RingdError extends Error {
  constructor(code, message, {retryAfterMs = null, closeCode = null} = {}) {
    super(message || code);
    this.name = "RingdError";
    this.code = code;
    // ERR_RATE_LIMITED: the wait until the server takes the next request.
    this.retryAfterMs = retryAfterMs;
    // The WebSocket close code, when a close ended the request or login.
    this.closeCode = closeCode;
  }
}

/** The ws:// or wss:// URL of the server that served the current page, or null outside a page. */
export function defaultServerURL(location = globalThis.location) {
  if (!location || !location.host || !/^https?:$/.test(location.protocol)) return null;
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/v1/ws`;
}

/** The wait before reconnect attempt `attempt` (0 for the first), in milliseconds. */
export function backoffDelay(attempt, {firstDelayMs, maxDelayMs} = DEFAULT_BACKOFF, random = Math.random) {
  const ceiling = Math.min(maxDelayMs, firstDelayMs * 2 ** attempt);
  return ceiling / 2 + random() * (ceiling / 2);
}

/** 128 random bits as 32 hex digits: a fresh clientCallId. */
export function newClientCallId() {
  const bytes = new Uint8Array(16);
  const crypto = globalThis.crypto;
  if (crypto && typeof crypto.getRandomValues === "function") crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

// With a global EventTarget (browsers, Node) the client is one, so that
// addEventListener works; `on()` works everywhere.
const EventBase = typeof globalThis.EventTarget === "function" ? globalThis.EventTarget : class {};

function makeEvent(name, detail) {
  if (typeof globalThis.CustomEvent === "function") return new CustomEvent(name, {detail});
  const event = new Event(name);
  Object.defineProperty(event, "detail", {value: detail});
  return event;
}

function textOf(data) {
  if (typeof data === "string") return data;
  if (data && typeof data.toString === "function" && !(data instanceof ArrayBuffer)) return data.toString();
  return new TextDecoder().decode(data);
}

/**
 * Events (`on(name, fn)` gives fn the detail; `addEventListener` the event):
 * - "call": a call object (every change of the user's calls, resumed ones too)
 * - "signal": a signal frame `{sessionId, from: {uid, deviceId}, payload}`
 * - "connection": `{state, reason, code, auth}`: state connecting, connected
 *   (auth: the auth result's data, on every successful login and reconnect),
 *   reconnecting (delayMs: the wait before the next attempt), disconnected
 *   (code: the close code of a final stop, 4001 refused, 4003 replaced)
 * - "seq": the largest `seq` seen grew (to keep for a resume after a reload)
 */
export class RingdClient extends EventBase {
  constructor({
    url = defaultServerURL(),
    reconnect = true,
    WebSocket = globalThis.WebSocket,
    requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  } = {}) {
    super();
    if (typeof WebSocket !== "function") {
      throw new RingdError("CLIENT_NO_WEBSOCKET", "no WebSocket class: pass one as the WebSocket option");
    }
    if (!url) throw new RingdError("CLIENT_BAD_URL", "no server URL: pass url (ws://host:port/v1/ws)");
    this.url = url;
    this.reconnect = reconnect === true ? DEFAULT_BACKOFF : reconnect ? {...DEFAULT_BACKOFF, ...reconnect} : null;
    this.requestTimeoutMs = requestTimeoutMs;
    this.state = "disconnected";
    this.uid = null;
    this.deviceId = null;
    // The largest `seq` seen in any call object or auth result: what a
    // reconnect names in `resume.afterSeq` so that no change is missed.
    this.lastSeq = null;
    // The store epoch those positions are of (the auth result's `epoch`),
    // named with them: a store that may have lost changes has another.
    this.epoch = null;
    this._Socket = WebSocket;
    this._ws = null;
    this._credentials = null;
    this._listeners = new Map();
    this._pending = new Map();
    this._counter = 0;
    this._attempt = 0;
    this._retryTimer = null;
    this._wanted = false; // false after close() or a final stop
    this._authenticated = false;
    this._firstLogin = null;
    this._connectedWaiters = [];
    this._logins = 0; // counts login() calls: a retry never crosses into another login
  }

  /** Calls fn(detail) for every `name` event; returns the function that stops it. */
  on(name, fn) {
    if (!this._listeners.has(name)) this._listeners.set(name, new Set());
    this._listeners.get(name).add(fn);
    return () => this._listeners.get(name).delete(fn);
  }

  /**
   * Connects and authenticates; resolves with the auth result's data.
   * credentials: {uid, authKey} or {token}. afterSeq resumes from a position
   * kept from before (a page reload), of the store epoch `epoch` when known. retry: a server that cannot be reached
   * is tried again with backoff instead of rejecting (only a refusal rejects).
   */
  login(credentials, {deviceId = null, afterSeq = null, epoch = null, retry = false} = {}) {
    const {uid, authKey, token} = credentials || {};
    if (!token && !(uid && authKey)) {
      return Promise.reject(new RingdError("CLIENT_USAGE", "login needs {uid, authKey} or {token}"));
    }
    this._halt("another login");
    this._logins += 1;
    this._credentials = token ? {authToken: token} : {uid, authKey};
    this.uid = null;
    this.deviceId = deviceId;
    this.lastSeq = afterSeq;
    this.epoch = epoch;
    this._wanted = true;
    this._attempt = 0;
    return new Promise((resolve, reject) => {
      this._firstLogin = {resolve, reject, retry};
      this._open();
    });
  }

  /** Closes the connection for good: no reconnect; pending requests fail with CLIENT_CLOSED. */
  close(reason = "closed by the client") {
    this._wanted = false;
    this._halt(reason);
    this._setState("disconnected", {reason});
  }

  /** Reconnects now instead of waiting out the backoff (the device went online). */
  reconnectNow() {
    if (!this._wanted || this._retryTimer === null || this._ws) return;
    clearTimeout(this._retryTimer);
    this._open();
  }

  /**
   * Places a call; resolves with it. A clientCallId is made when none is
   * given, and the same request goes again on the next connection when this
   * one drops before the result: the server answers with the same call.
   */
  async initiateCall(to, type, {metadata, clientCallId = newClientCallId(), timeout, timeoutMs} = {}) {
    const params = {receiverId: to, callType: type, clientCallId, metadata, timeout, timeoutMs};
    const login = this._logins;
    for (let attempt = 1; ; attempt++) {
      try {
        if (!this._authenticated && this._wanted) await this._whenConnected();
        return (await this.request("initiateCall", params)).call;
      } catch (error) {
        const retryable = error.code === "CLIENT_CLOSED" || error.code === "CLIENT_TIMEOUT";
        const sameLogin = login === this._logins && this._wanted;
        if (!retryable || !sameLogin || !this.reconnect || attempt >= INITIATE_ATTEMPTS) throw error;
      }
    }
  }

  async acceptCall(sessionId) {
    return (await this.request("acceptCall", {sessionId})).call;
  }

  /** status: "rejected" (default) or "busy"; reason: a quick reply kept on the call. */
  async rejectCall(sessionId, {reason, status} = {}) {
    return (await this.request("rejectCall", {sessionId, reason, status})).call;
  }

  async cancelCall(sessionId) {
    return (await this.request("cancelCall", {sessionId})).call;
  }

  async endCall(sessionId) {
    return (await this.request("endCall", {sessionId})).call;
  }

  /** From a callee device that really shows the ringing call (the caller then sees "ringing"). */
  async ringing(sessionId) {
    return (await this.request("ringing", {sessionId})).call;
  }

  async activeCall() {
    return (await this.request("getActiveCall")).call;
  }

  /** filter: {limit, cursor, callType, callStatus, direction, with}; resolves with {logs, next}. */
  async callLogs(filter = {}) {
    const {logs, next} = await this.request("getCallLogs", filter);
    return {logs, next: next ?? null};
  }

  /** {platform: "apns-voip"|"fcm", token, topic, environment, alertToken}; resolves with the stored token. */
  async registerPushToken(registration) {
    return (await this.request("registerPushToken", registration)).pushToken;
  }

  async unregisterPushToken() {
    return (await this.request("unregisterPushToken")).removed;
  }

  /** mode: "busy", "silent" or "off"; until: ms since the epoch. */
  async setDoNotDisturb(mode, {until} = {}) {
    return (await this.request("setDoNotDisturb", {mode, until})).doNotDisturb;
  }

  /** {url, token, expiresAt} to join the call's media room. */
  async mediaToken(sessionId) {
    return this.request("getMediaToken", {sessionId});
  }

  /** {iceServers, expiresAt} for an RTCPeerConnection. */
  async iceServers() {
    return this.request("getIceServers");
  }

  /** Relays payload to the other device in the call; resolves with whether it was delivered. */
  async signal(sessionId, payload) {
    return (await this.request("signal", {sessionId, payload})).delivered;
  }

  /** One request of any type; resolves with its result's data or rejects with a RingdError. */
  request(type, params = {}) {
    if (!this._authenticated || !this._ws) {
      return Promise.reject(new RingdError("CLIENT_CLOSED", "not connected"));
    }
    return this._send({type, ...params}, this._ws);
  }

  _emit(name, detail) {
    for (const fn of [...(this._listeners.get(name) || [])]) {
      try {
        fn(detail);
      } catch (error) {
        // One listener's failure must not stop the others or the client.
        setTimeout(() => {
          throw error;
        }, 0);
      }
    }
    if (typeof this.dispatchEvent === "function") this.dispatchEvent(makeEvent(name, detail));
  }

  _setState(state, {reason = "", code = null, auth = null, delayMs = null} = {}) {
    this.state = state;
    this._emit("connection", {state, reason, code, auth, delayMs});
  }

  /** No socket, no retry timer, no pending request any more (the socket's close event is ignored). */
  _halt(reason) {
    clearTimeout(this._retryTimer);
    this._retryTimer = null;
    const ws = this._ws;
    this._ws = null;
    if (ws) {
      try {
        ws.close(1000, reason);
      } catch {
        // A socket still connecting may refuse; it is dropped all the same.
      }
    }
    this._authenticated = false;
    this._failPending(new RingdError("CLIENT_CLOSED", reason));
    this._settleFirstLogin(new RingdError("CLIENT_CLOSED", reason));
    this._releaseWaiters(new RingdError("CLIENT_CLOSED", reason));
  }

  _open() {
    this._retryTimer = null;
    this._setState(this._attempt === 0 ? "connecting" : "reconnecting");
    let ws;
    try {
      ws = new this._Socket(this.url);
    } catch (error) {
      this._stop(`bad server URL: ${error.message || error}`, null, "CLIENT_BAD_URL");
      return;
    }
    this._ws = ws;
    ws.onopen = () => this._authenticate(ws);
    ws.onmessage = (message) => this._receive(message.data);
    ws.onclose = (close) => this._closed(ws, close);
    // An error is always followed by close, which decides what to do.
    ws.onerror = () => {};
  }

  async _authenticate(ws) {
    const frame = {type: "auth", ...this._credentials};
    if (this.lastSeq !== null && this.deviceId) {
      frame.resume = {deviceId: this.deviceId, afterSeq: this.lastSeq};
      if (this.epoch !== null) frame.resume.epoch = this.epoch;
    } else if (this.deviceId) frame.deviceId = this.deviceId;
    let data;
    try {
      data = await this._send(frame, ws);
    } catch (error) {
      // A refused auth is followed by close 4001, which _closed handles.
      if (ws !== this._ws) return;
      // Refused for good (ERR_AUTH_FAILED, ERR_TOO_MANY_DEVICES…, then 4001);
      // ERR_UNAVAILABLE (a cluster node without its database) may pass.
      const refused = error.code.startsWith("ERR_") && error.code !== "ERR_UNAVAILABLE";
      if (this._firstLogin && (refused || !this._firstLogin.retry)) {
        this._settleFirstLogin(error);
        this._wanted = false;
      }
      if (error.code === "CLIENT_TIMEOUT") ws.close(); // no answer in time: _closed tries again
      return;
    }
    if (ws !== this._ws) return;
    this._authenticated = true;
    this._attempt = 0;
    this.uid = data.user.uid;
    this.deviceId = data.deviceId;
    // Positions of another store epoch say nothing about this one's.
    if ((data.epoch ?? null) !== this.epoch) this.lastSeq = null;
    this.epoch = data.epoch ?? null;
    this._noteSeq(data.seq);
    // Resumed changes first, oldest first, as if they had come as events.
    for (const call of data.calls || []) this._emitCall(call);
    this._setState("connected", {auth: data});
    this._releaseWaiters(null);
    this._settleFirstLogin(null, data);
  }

  _closed(ws, close) {
    if (ws !== this._ws) return;
    this._ws = null;
    this._authenticated = false;
    const code = close.code ?? null;
    this._failPending(new RingdError("CLIENT_CLOSED", "the connection closed", {closeCode: code}));
    if (code === CLOSE_REPLACED) {
      this._stop("this device signed in again elsewhere", code);
    } else if (code === CLOSE_NOT_AUTHENTICATED || !this._wanted || !this.reconnect) {
      this._stop(close.reason || (code === CLOSE_NOT_AUTHENTICATED ? "not signed in" : "closed"), code);
    } else if (this._firstLogin && !this._firstLogin.retry) {
      // Never got in: a wrong address or a server that is down. Say so at
      // once rather than retrying behind a sign-in form.
      this._stop("cannot reach the server", code, "CLIENT_CONNECT_FAILED");
    } else {
      const delayMs = backoffDelay(this._attempt++, this.reconnect);
      this._setState("reconnecting", {reason: `reconnecting in ${(delayMs / 1000).toFixed(1)} s`, code, delayMs});
      this._retryTimer = setTimeout(() => this._open(), delayMs);
    }
  }

  /** A final stop: no more reconnecting. */
  _stop(reason, code, errorCode = code === CLOSE_NOT_AUTHENTICATED ? "ERR_AUTH_FAILED" : "CLIENT_CLOSED") {
    this._wanted = false;
    this._authenticated = false;
    const error = new RingdError(errorCode, reason, {closeCode: code});
    this._settleFirstLogin(error);
    this._releaseWaiters(error);
    this._setState("disconnected", {reason, code});
  }

  _receive(data) {
    let frame;
    try {
      frame = JSON.parse(textOf(data));
    } catch {
      return; // the server sends JSON only; anything else is not ours to act on
    }
    if (frame.type === "result") {
      const waiter = this._pending.get(frame.id);
      if (!waiter) return;
      this._pending.delete(frame.id);
      clearTimeout(waiter.timer);
      if (frame.ok) {
        const data = frame.data || {};
        if (data.call) this._noteSeq(data.call.seq);
        waiter.resolve(data);
      } else {
        const {code, message, retryAfterMs} = frame.error || {};
        waiter.reject(new RingdError(code || "CLIENT_PROTOCOL", message, {retryAfterMs: retryAfterMs ?? null}));
      }
    } else if (frame.type === "call" && frame.call) {
      this._emitCall(frame.call);
    } else if (frame.type === "signal") {
      this._emit("signal", frame);
    }
  }

  _emitCall(call) {
    this._noteSeq(call.seq);
    this._emit("call", call);
  }

  _noteSeq(seq) {
    if (typeof seq === "number" && (this.lastSeq === null || seq > this.lastSeq)) {
      this.lastSeq = seq;
      this._emit("seq", seq);
    }
  }

  _send(frame, ws) {
    const id = String(++this._counter);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new RingdError("CLIENT_TIMEOUT", `no answer to ${frame.type} in ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this._pending.set(id, {resolve, reject, timer});
      try {
        // undefined parameters (options not given) vanish in JSON.
        ws.send(JSON.stringify({...frame, id}));
      } catch (error) {
        clearTimeout(timer);
        this._pending.delete(id);
        reject(new RingdError("CLIENT_CLOSED", String(error.message || error)));
      }
    });
  }

  _failPending(error) {
    for (const waiter of this._pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this._pending.clear();
  }

  _settleFirstLogin(error, data) {
    const first = this._firstLogin;
    if (!first) return;
    this._firstLogin = null;
    if (error) first.reject(error);
    else first.resolve(data);
  }

  /** Resolves at the next successful login, or rejects after requestTimeoutMs or a final stop. */
  _whenConnected() {
    return new Promise((resolve, reject) => {
      const waiter = {resolve, reject};
      waiter.timer = setTimeout(() => {
        this._connectedWaiters = this._connectedWaiters.filter((other) => other !== waiter);
        reject(new RingdError("CLIENT_TIMEOUT", `not connected within ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this._connectedWaiters.push(waiter);
    });
  }

  _releaseWaiters(error) {
    const waiters = this._connectedWaiters;
    this._connectedWaiters = [];
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }
}
