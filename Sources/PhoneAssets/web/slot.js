// The media this page holds: at most one call's camera and microphone (opened
// early: while the caller's call rings, while the callee's accept travels)
// and its CallMedia. main.js says when; this module keeps the pieces
// together so that none outlives its call (the camera's light goes off).

import {CallMedia, openLocalMedia} from "./media.js";

const MEDIA_WORDS = {
  new: "Setting up media…",
  connecting: "Connecting media…",
  connected: "Media connected",
  disconnected: "Media interrupted; reconnecting…",
  failed: "Media failed",
  closed: "",
};
const DEVICE_WORDS = {audio: "microphone", video: "camera"};

/** What a call lacks of its camera and microphone, in words: "Camera blocked (permission denied)." */
function missingWords(missing, failure) {
  if (!missing.length) return "";
  const what = missing.map((kind) => DEVICE_WORDS[kind]).join(" and ");
  const why = failure === "NotAllowedError" ? "blocked (permission denied)" : "unavailable";
  return `${what.charAt(0).toUpperCase()}${what.slice(1)} ${why}: the other side cannot ${
    missing.includes("audio") ? "hear" : "see"} you.`;
}

export class MediaSlot {
  /** onLocal(note): the camera and microphone opened, note says what is missing ("" if nothing). */
  constructor({ui, client, relay, onLocal = () => {}}) {
    this.onLocal = onLocal;
    this.ui = ui;
    this.client = client;
    this.relay = relay;
    this.media = null; // CallMedia of the call this device is in
    this.local = null; // {sessionId, promise of MediaStream}
    this.earlySignals = []; // signals of the current call that came before its CallMedia
    this.muted = false;
    this.cameraOff = false;
  }

  get pc() {
    return this.media ? this.media.pc : null;
  }

  holdsLocal(sessionId) {
    return Boolean(this.local && this.local.sessionId === sessionId);
  }

  /** Opens the camera (and microphone) for a call; sessionId may come later (bindLocal). */
  openLocal(sessionId, callType) {
    this.dropLocal();
    const local = {sessionId, kinds: null, promise: openLocalMedia(callType)};
    this.local = local;
    local.promise.then((stream) => {
      if (this.local !== local) return;
      local.kinds = new Set(stream.getTracks().map((track) => track.kind));
      const wanted = callType === "video" ? ["audio", "video"] : ["audio"];
      const note = missingWords(wanted.filter((kind) => !local.kinds.has(kind)), stream.failure);
      this.ui.setMediaNote(note);
      this.onLocal(note);
    });
    return local;
  }

  /** Whether this call's local media has a track of `kind` (true until it is known). */
  hasTrack(kind) {
    return !this.local || !this.local.kinds || this.local.kinds.has(kind);
  }

  bindLocal(local, sessionId) {
    local.sessionId = sessionId;
  }

  dropLocal(only = null) {
    if (!this.local || (only && this.local !== only)) return;
    this.local.promise.then((stream) => stream.getTracks().forEach((track) => track.stop()));
    this.local = null;
    this.ui.setLocalStream(null);
    this.ui.setMediaNote("");
  }

  /** The self view, once the camera is open. */
  showLocal() {
    const local = this.local;
    if (local) local.promise.then((stream) => this.local === local && this.ui.setLocalStream(stream));
  }

  /** Media for an ongoing call of this device; rejoin: this page never saw it ring. */
  ensure(call, role, {rejoin}) {
    if (this.media && this.media.sessionId === call.sessionId) return;
    this.close({keepLocalFor: call.sessionId});
    if (!this.holdsLocal(call.sessionId)) this.openLocal(call.sessionId, call.callType);
    const media = new CallMedia({
      call,
      role,
      localMedia: this.local.promise,
      send: (payload) => this.send(call.sessionId, payload),
      // getIceServers before each connection; without an answer, none (host candidates).
      iceServers: () => this.client.iceServers().then((data) => data.iceServers || [], () => []),
      relay: this.relay,
    });
    this.media = media;
    media.setMuted(this.muted);
    media.setCameraOff(this.cameraOff);
    media.addEventListener("state", ({detail}) => {
      if (media === this.media) this.ui.setMediaState(detail, MEDIA_WORDS[detail] ?? detail);
    });
    media.addEventListener("remote", ({detail}) => media === this.media && this.ui.setRemoteStream(detail));
    // A callee that joins a call already going (a reload) asks for a fresh offer.
    media.start({rejoin});
    const early = this.earlySignals.filter((frame) => frame.sessionId === call.sessionId);
    this.earlySignals = [];
    for (const frame of early) media.handleSignal(frame.payload);
  }

  /** After a reconnect to ringd: repairs the connection only if it broke. */
  resume() {
    if (this.media) this.media.resume({lostConnection: false});
  }

  setSwitches({muted, cameraOff}) {
    this.muted = muted;
    this.cameraOff = cameraOff;
    if (this.media) {
      this.media.setMuted(muted);
      this.media.setCameraOff(cameraOff);
    }
  }

  /** Hang-up, the other side's end, another device took it: everything goes. */
  close({keepLocalFor = null} = {}) {
    if (this.media) this.media.close();
    this.media = null;
    if (!keepLocalFor || !this.holdsLocal(keepLocalFor)) this.dropLocal();
    this.earlySignals = this.earlySignals.filter((frame) => frame.sessionId === keepLocalFor);
    this.ui.setRemoteStream(null);
    this.ui.setMediaState("", "");
  }

  /** A new call came: the media of any other (not the one being dialled) goes. */
  closeOtherThan(sessionId) {
    if (this.media && this.media.sessionId !== sessionId) {
      this.media.close();
      this.media = null;
      this.ui.setRemoteStream(null);
      this.ui.setMediaState("", "");
    }
    if (this.local && this.local.sessionId !== null && this.local.sessionId !== sessionId) this.dropLocal();
  }

  get busy() {
    return Boolean(this.media || this.local);
  }

  /**
   * One signal, after the ones before it: ringd relays them in the order it
   * gets them, and one refused by the rate limit (an offer and its burst of
   * candidates can reach limits.requestBurst) is sent again, after a pause,
   * before any later one. Resolves with `delivered`.
   */
  send(sessionId, payload) {
    const attempt = async () => {
      for (let retry = 0; ; retry++) {
        try {
          return await this.client.signal(sessionId, payload);
        } catch (error) {
          if (error.code !== "ERR_RATE_LIMITED" || retry >= 5) {
            console.debug("[signal] not sent", payload.kind, error.code);
            return false;
          }
          await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** retry));
        }
      }
    };
    this.sending = (this.sending || Promise.resolve()).then(attempt);
    return this.sending;
  }

  /** A signal frame; kept for a moment when it is the current call's and its media is still being made. */
  receive(frame, currentSessionId) {
    if (this.media && this.media.sessionId === frame.sessionId) this.media.handleSignal(frame.payload);
    else if (frame.sessionId === currentSessionId) this.earlySignals.push(frame);
  }
}
