// The connection to ringd: one WebSocket at /v1/ws, the auth frame, requests
// matched to their results by id, call and signal events, and reconnecting
// with resume the way SignalClient does (docs/PROTOCOL.md, "Resume").
//
// Why a class of our own and no library: the page loads nothing from
// elsewhere (CSP 'self'), and the protocol is small.

const REQUEST_TIMEOUT_MS = 10_000;
// Backoff between reconnects: doubling from 0.5 s up to 15 s, each wait a
// random point in its upper half so that many pages dropped by one restart
// do not all come back in the same millisecond.
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 15_000;

// Close codes of the ringing protocol after which trying again cannot help.
const CLOSE_NOT_AUTHENTICATED = 4001;
const CLOSE_REPLACED = 4003;

export class RequestError extends Error {
  constructor(code, message) {
    super(message || code);
    this.code = code;
  }
}

/** The ws:// or wss:// URL of the server that served this page. */
export function defaultServerURL(location = window.location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/v1/ws`;
}

export function backoffDelay(attempt, random = Math.random) {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt);
  return ceiling / 2 + random() * (ceiling / 2);
}

/**
 * Events (EventTarget): "state" (detail: {state, reason, code}) with state one of
 * connecting, online, reconnecting, offline (code: the close code of a final
 * stop, 4001 refused, 4003 replaced); "authenticated" (detail: the auth
 * result's data, after every call it resumed was handed over); "call"
 * (detail: a call object); "signal" (detail: the signal frame).
 */
export class Signaling extends EventTarget {
  constructor(url = defaultServerURL()) {
    super();
    this.url = url;
    this.ws = null;
    this.state = "offline";
    this.credentials = null; // {uid, authKey} or {authToken}
    this.deviceId = null;
    this.uid = null;
    // The largest `seq` seen in any call object or auth result: what a
    // reconnect names in `resume.afterSeq` so that no change is missed.
    this.lastSeq = null;
    this.pending = new Map();
    this.counter = 0;
    this.attempt = 0;
    this.retryTimer = null;
    this.wanted = false; // false after signOut or a fatal close
    this.authenticated = false;
  }

  /**
   * Connects and authenticates; resolves with the auth result's data.
   * retry (a reload's automatic sign-in): a server that cannot be reached
   * is tried again with backoff; only a refused auth rejects.
   */
  signIn({uid, authKey, authToken, deviceId, lastSeq = null, retry = false}) {
    this.halt();
    if (this.firstAuth) this.firstAuth.reject(new RequestError("ERR_SUPERSEDED", "another sign-in"));
    this.credentials = authToken ? {authToken} : {uid, authKey};
    this.deviceId = deviceId;
    this.lastSeq = lastSeq;
    this.wanted = true;
    this.attempt = 0;
    return new Promise((resolve, reject) => {
      this.firstAuth = {resolve, reject, retry};
      this.open();
    });
  }

  signOut() {
    this.wanted = false;
    this.halt();
    if (this.firstAuth) this.firstAuth.reject(new RequestError("ERR_SUPERSEDED", "signed out"));
    this.firstAuth = null;
    this.setState("offline", "signed out");
  }

  /** No socket and no retry timer any more (closing the socket ignores its close event). */
  halt() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000, "signed out");
    this.authenticated = false;
    this.failPending("ERR_DISCONNECTED", "signed out");
  }

  /**
   * Reconnects now instead of waiting out the backoff (the browser went
   * online): only while a retry waits, never beside a socket still connecting.
   */
  reconnectNow() {
    if (!this.wanted || this.retryTimer === null || this.ws) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.open();
  }

  setState(state, reason = "", code = null) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", {detail: {state, reason, code}}));
  }

  open() {
    this.retryTimer = null;
    this.setState(this.attempt === 0 && !this.authenticated ? "connecting" : "reconnecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => this.authenticate(ws);
    ws.onmessage = (message) => this.receive(ws, message.data);
    ws.onclose = (close) => this.closed(ws, close);
    // An error is always followed by close, which decides what to do.
    ws.onerror = () => {};
  }

  async authenticate(ws) {
    const frame = {type: "auth", ...this.credentials};
    if (this.lastSeq !== null && this.deviceId) {
      frame.resume = {deviceId: this.deviceId, afterSeq: this.lastSeq};
    } else if (this.deviceId) {
      frame.deviceId = this.deviceId;
    }
    let data;
    try {
      data = await this.send(frame, ws);
    } catch (error) {
      // The server closes with 4001 after a refused auth; closed() sees it.
      if (ws !== this.ws) return;
      if (this.firstAuth && (!this.firstAuth.retry || error.code === "ERR_AUTH_FAILED")) {
        this.firstAuth.reject(error);
        this.firstAuth = null;
        this.wanted = false;
      } else if (error.code === "ERR_TIMEOUT") {
        ws.close(); // no answer in time: closed() tries again
      }
      return;
    }
    if (ws !== this.ws) return;
    this.authenticated = true;
    this.attempt = 0;
    this.uid = data.user.uid;
    this.deviceId = data.deviceId;
    this.noteSeq(data.seq);
    // Resumed changes first, oldest first, as if they had come as events.
    for (const call of data.calls || []) this.emitCall(call);
    this.setState("online");
    this.dispatchEvent(new CustomEvent("authenticated", {detail: data}));
    if (this.firstAuth) {
      this.firstAuth.resolve(data);
      this.firstAuth = null;
    }
  }

  closed(ws, close) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.authenticated = false;
    this.failPending("ERR_DISCONNECTED", "the connection closed");
    if (close.code === CLOSE_REPLACED) {
      this.stop("this device signed in again elsewhere (another tab?)", close.code);
      return;
    }
    if (close.code === CLOSE_NOT_AUTHENTICATED || !this.wanted) {
      this.stop(close.reason || "not signed in", close.code);
      return;
    }
    if (this.firstAuth && !this.firstAuth.retry) {
      // Never got in: a wrong address or a server that is down. Say so
      // rather than retrying behind a sign-in form.
      this.firstAuth.reject(new RequestError("ERR_CONNECTION", "cannot reach the server"));
      this.firstAuth = null;
      this.stop("cannot reach the server");
      return;
    }
    const delay = backoffDelay(this.attempt++);
    this.setState("reconnecting", `reconnecting in ${(delay / 1000).toFixed(1)} s`);
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  stop(reason, code = null) {
    this.wanted = false;
    this.authenticated = false;
    if (this.firstAuth) {
      this.firstAuth.reject(new RequestError(code === CLOSE_NOT_AUTHENTICATED ? "ERR_AUTH_FAILED" : "ERR_CONNECTION", reason));
      this.firstAuth = null;
    }
    this.setState("offline", reason, code);
  }

  receive(ws, text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame.type === "result") {
      const waiter = this.pending.get(frame.id);
      if (!waiter) return;
      this.pending.delete(frame.id);
      clearTimeout(waiter.timer);
      if (frame.ok) {
        const call = frame.data && frame.data.call;
        if (call) this.noteSeq(call.seq);
        waiter.resolve(frame.data || {});
      } else {
        waiter.reject(new RequestError(frame.error.code, frame.error.message));
      }
    } else if (frame.type === "call") {
      this.emitCall(frame.call);
    } else if (frame.type === "signal") {
      this.dispatchEvent(new CustomEvent("signal", {detail: frame}));
    }
  }

  emitCall(call) {
    this.noteSeq(call.seq);
    this.dispatchEvent(new CustomEvent("call", {detail: call}));
  }

  noteSeq(seq) {
    if (typeof seq === "number" && (this.lastSeq === null || seq > this.lastSeq)) {
      this.lastSeq = seq;
      this.dispatchEvent(new CustomEvent("seq", {detail: seq}));
    }
  }

  /** One request; resolves with its result's data or rejects with a RequestError. */
  request(type, params = {}) {
    if (!this.authenticated || !this.ws) {
      return Promise.reject(new RequestError("ERR_DISCONNECTED", "not connected"));
    }
    return this.send({type, ...params}, this.ws);
  }

  send(frame, ws) {
    const id = String(++this.counter);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RequestError("ERR_TIMEOUT", `no answer to ${frame.type} in time`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {resolve, reject, timer});
      try {
        ws.send(JSON.stringify({...frame, id}));
      } catch (error) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new RequestError("ERR_DISCONNECTED", String(error)));
      }
    });
  }

  failPending(code, message) {
    for (const waiter of this.pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new RequestError(code, message));
    }
    this.pending.clear();
  }
}
