// The page's DOM: what it shows for a view of the call, the call log and
// the connection, and which of its controls were used. It knows nothing of
// the protocol; main.js decides, this module draws. Text goes in through
// textContent only, so no uid or server string is ever parsed as HTML.

const $ = (id) => document.getElementById(id);

export function formatDuration(ms) {
  if (ms === null || ms === undefined || ms < 0) return "";
  const seconds = Math.floor(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

function formatWhen(ms) {
  const date = new Date(ms);
  const today = new Date();
  const time = date.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"});
  if (date.toDateString() === today.toDateString()) return time;
  return `${date.toLocaleDateString([], {month: "short", day: "numeric"})} ${time}`;
}

const STATUS_WORDS = {
  ended: "ended",
  rejected: "rejected",
  busy: "busy",
  cancelled: "cancelled",
  unanswered: "no answer",
  ongoing: "ongoing",
  initiated: "ringing",
};

export class UI {
  constructor() {
    this.el = {};
    for (const id of [
      "who", "who-uid", "who-device", "connection", "sign-out", "status", "sign-in", "sign-in-form", "uid",
      "method-key", "method-token", "key-field", "token-field", "auth-key", "auth-token", "sign-in-button",
      "sign-in-error", "phone", "dial-form", "callee", "call-video", "call-audio", "call-title", "call-state",
      "call-duration", "call-session", "call-session-id", "accept", "reject", "busy", "cancel", "hang-up", "mute",
      "camera", "videos", "local-video", "remote-video", "remote-caption", "media-state", "sound-hint",
      "logs-refresh", "log-rows", "logs-empty",
    ]) {
      this.el[id] = $(id);
    }
    this.lastAnnouncement = "";
    this.mediaText = "";
    this.mediaNote = "";
    this.soundBlocked = false;
    this.durationTimer = null;
    // Remote sound refused for lack of a user gesture (after a reload): the first click or key retries.
    for (const type of ["pointerdown", "keydown"]) {
      document.addEventListener(type, () => this.soundBlocked && this.playRemote(), {capture: true});
    }
    for (const radio of [this.el["method-key"], this.el["method-token"]]) {
      radio.addEventListener("change", () => this.showMethod(radio.value));
    }
  }

  /**
   * handlers: signIn({uid, method, authKey, authToken}), signOut, call(uid, type), accept, reject, busy,
   * cancel, hangUp, mute, camera, refreshLogs
   */
  bind(handlers) {
    this.el["sign-in-form"].addEventListener("submit", (event) => {
      event.preventDefault();
      handlers.signIn({
        uid: this.el.uid.value.trim(),
        method: this.el["method-token"].checked ? "token" : "key",
        authKey: this.el["auth-key"].value.trim(),
        authToken: this.el["auth-token"].value.trim(),
      });
    });
    this.el["dial-form"].addEventListener("submit", (event) => {
      event.preventDefault();
      // Enter in the field submits with the first button: a video call.
      const type = event.submitter && event.submitter.value === "audio" ? "audio" : "video";
      handlers.call(this.el.callee.value.trim(), type);
    });
    const click = (id, handler) => this.el[id].addEventListener("click", () => handler());
    click("sign-out", handlers.signOut);
    click("accept", handlers.accept);
    click("reject", handlers.reject);
    click("busy", handlers.busy);
    click("cancel", handlers.cancel);
    click("hang-up", handlers.hangUp);
    click("mute", handlers.mute);
    click("camera", handlers.camera);
    click("logs-refresh", handlers.refreshLogs);
  }

  showMethod(method) {
    this.el["key-field"].hidden = method !== "key";
    this.el["token-field"].hidden = method !== "token";
  }

  fillSignIn({uid, method, authKey}) {
    if (uid) this.el.uid.value = uid;
    if (method === "token") this.el["method-token"].checked = true;
    if (authKey) this.el["auth-key"].value = authKey;
    this.showMethod(method === "token" ? "token" : "key");
  }

  setSigningIn(busy, error = "") {
    this.el["sign-in-button"].disabled = busy;
    this.el["sign-in-error"].textContent = error;
  }

  showSignedIn(signedIn, {uid = "", deviceId = "", focus = true} = {}) {
    this.el["sign-in"].hidden = signedIn;
    this.el.phone.hidden = !signedIn;
    this.el.who.hidden = !signedIn;
    this.el["sign-out"].hidden = !signedIn;
    this.el["who-uid"].textContent = uid;
    this.el["who-device"].textContent = deviceId;
    if (!focus) return;
    if (signedIn) this.el.callee.focus();
    else this.el.uid.focus();
  }

  setConnection(state, reason = "") {
    document.body.dataset.connection = state;
    const words = {online: "online", connecting: "connecting…", reconnecting: "reconnecting…", offline: "offline"};
    this.el.connection.textContent = words[state] || state;
    this.el.connection.title = reason;
  }

  /** The one live region: every change worth hearing is said here once. */
  announce(text) {
    if (text === this.lastAnnouncement) return;
    this.lastAnnouncement = text;
    this.el.status.textContent = text;
  }

  /**
   * view: {state, title, detail, sessionId, callType, peer, buttons: Set of
   * ids, muted, cameraOff, videos, duration}
   */
  renderCall(view) {
    const body = document.body;
    body.dataset.callState = view.state;
    body.dataset.sessionId = view.sessionId || "";
    body.dataset.callType = view.callType || "";
    this.el["call-title"].textContent = view.title;
    this.el["call-state"].textContent = view.detail;
    this.el["call-session"].hidden = !view.sessionId;
    this.el["call-session-id"].textContent = view.sessionId || "";
    this.setDuration(view.duration);

    const focused = document.activeElement;
    for (const id of ["accept", "reject", "busy", "cancel", "hang-up", "mute", "camera"]) {
      this.el[id].hidden = !view.buttons.has(id);
    }
    // Toggle buttons: a fixed label, the state only in aria-pressed.
    this.el.mute.setAttribute("aria-pressed", String(Boolean(view.muted)));
    this.el.camera.setAttribute("aria-pressed", String(Boolean(view.cameraOff)));
    this.el["remote-caption"].textContent = view.peer || "Them";
    this.el.videos.hidden = !view.videos;

    // A keyboard user whose button just went away (Accept, once accepted)
    // lands on the call's main control instead of the page's top.
    if (focused && focused.hidden) {
      const next = ["hang-up", "accept", "cancel"].map((id) => this.el[id]).find((button) => !button.hidden);
      (next || this.el.callee).focus();
    }
    const dialing = view.buttons.has("dial");
    this.el["call-video"].disabled = !dialing;
    this.el["call-audio"].disabled = !dialing;
  }

  setDuration(ms) {
    this.el["call-duration"].textContent = formatDuration(ms);
  }

  /** A running duration from `since` (ms since the epoch), or none (null). */
  runDuration(since) {
    clearInterval(this.durationTimer);
    this.durationTimer = null;
    if (!since) return;
    const tick = () => this.setDuration(Math.max(0, Date.now() - since));
    tick();
    this.durationTimer = setInterval(tick, 1000);
  }

  setMediaState(state, text) {
    document.body.dataset.mediaState = state || "";
    this.mediaText = text || "";
    this.showMediaLine();
  }

  /** What the call lacks (a denied camera), shown beside the connection's state. */
  setMediaNote(note) {
    this.mediaNote = note || "";
    this.showMediaLine();
  }

  showMediaLine() {
    this.el["media-state"].textContent = [this.mediaText, this.mediaNote].filter(Boolean).join(" · ");
  }

  setLocalStream(stream) {
    if (this.el["local-video"].srcObject !== stream) this.el["local-video"].srcObject = stream;
  }

  setRemoteStream(stream) {
    const video = this.el["remote-video"];
    if (video.srcObject !== stream) video.srcObject = stream;
    if (stream) this.playRemote();
    else this.setSoundBlocked(false);
  }

  /** Autoplay may be refused without a gesture: a hint says so until a click or key retries it. */
  playRemote() {
    const video = this.el["remote-video"];
    if (!video.srcObject) return this.setSoundBlocked(false);
    video.play().then(() => this.setSoundBlocked(false), (error) => {
      if (error.name === "NotAllowedError") this.setSoundBlocked(true);
    });
  }

  setSoundBlocked(blocked) {
    this.soundBlocked = blocked;
    this.el["sound-hint"].hidden = !blocked;
  }

  focusAccept() {
    this.el.accept.focus();
  }

  /** logs: CallLog objects, newest first, as getCallLogs gives them. */
  renderLogs(logs) {
    const rows = this.el["log-rows"];
    rows.replaceChildren();
    for (const log of logs) {
      const item = document.createElement("li");
      item.dataset.sessionId = log.sessionId;
      item.dataset.status = log.status;
      if (log.missed) item.classList.add("missed");
      const outgoing = log.direction === "outgoing";
      const peer = outgoing ? log.receiver.uid : log.initiator.uid;
      const word = STATUS_WORDS[log.status] || log.status;
      // Two lines: who and when; how it went, the type and how long it lasted.
      const parts = [
        ["log-peer", `${outgoing ? "to" : "from"} ${peer}`],
        ["log-when", formatWhen(log.initiatedAt)],
        ["log-status", log.missed ? `missed (${word})` : word],
        ["log-duration", [log.callType, formatDuration(log.durationMs)].filter(Boolean).join(" · ")],
      ];
      for (const [className, text] of parts) {
        const span = document.createElement("span");
        span.className = className;
        span.textContent = text;
        item.append(span, " ");
      }
      item.title = `session ${log.sessionId}`;
      rows.append(item);
    }
    this.el["logs-empty"].hidden = logs.length > 0;
  }
}
