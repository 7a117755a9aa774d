// The softphone's controller: signs in, turns ringd's call objects into what
// the page shows and plays, and starts or stops the media (docs/PHONE.md).
// Every decision follows the server's call object (status, initiatorDevice,
// acceptedBy), never a guess of its own, so a reload, a reconnect or a second
// device all land on the same view.

// The same module apps load (docs/WEB.md): one client of the protocol.
import {RingdClient} from "../client/ringd-client.js";
import {MediaSlot} from "./slot.js";
import {Ringtone} from "./ringtone.js";
import {UI} from "./ui.js";
import {describeCall, lostView, LIVE, roleOf, isMine, ERROR_WORDS, words} from "./view.js";
import {Storage} from "./storage.js";

// ?relay=1: TURN relay candidates only (iceTransportPolicy "relay"), to
// prove the TURN server and its minted credentials; the browser test uses it.
const RELAY = new URLSearchParams(window.location.search).get("relay") === "1";

// The client's connection states in the page's words (body[data-connection]).
const CONNECTION_WORDS = {connected: "online", disconnected: "offline"};
const connectionWord = (state) => CONNECTION_WORDS[state] || state;

class Phone {
  constructor() {
    this.ui = new UI();
    this.ringtone = new Ringtone();
    this.client = new RingdClient();
    this.signIns = 0; // each sign-in and sign-out counts: an older sign-in's outcome is ignored
    this.me = null;
    this.call = null; // the call the page shows (live, or the last one that ended)
    this.lost = null; // {sessionId, reason}: this tab lost track of that call (replaced, refused, end unknown)
    this.slot = new MediaSlot({ui: this.ui, client: this.client, relay: RELAY, onLocal: (note) => {
      this.render(); // Mute and Camera off only with a track to switch
      if (note) this.ui.announce(note);
    }});
    this.placedHere = new Set(); // session ids this page initiated
    this.rangHere = new Set(); // session ids this page saw ringing (or made ongoing by glare)
    this.acknowledged = new Set(); // session ids this page told ringd it shows ringing
    this.muted = false;
    this.cameraOff = false;
    this.logs = [];
    this.authentications = 0;

    this.client.on("connection", (change) => this.connectionChanged(change));
    this.client.on("seq", (seq) => Storage.saveSeq(seq, this.client.epoch));
    this.client.on("call", (call) => this.applyCall(call));
    this.client.on("signal", (frame) => this.receiveSignal(frame));
    window.addEventListener("online", () => this.client.reconnectNow());
    // A tab that signed in by itself (a reload) has had no gesture yet, so
    // its AudioContext may be suspended: the first click or key wakes it.
    for (const type of ["pointerdown", "keydown"]) {
      document.addEventListener(type, () => this.ringtone.prepare(), {capture: true});
    }

    this.ui.bind({
      signIn: (form) => this.signIn(form),
      signOut: () => this.signOut(),
      call: (uid, type) => this.dial(uid, type),
      accept: () => this.accept(),
      reject: () => this.act((id) => this.client.rejectCall(id)),
      busy: () => this.act((id) => this.client.rejectCall(id, {status: "busy"})),
      cancel: () => this.act((id) => this.client.cancelCall(id)),
      hangUp: () => this.act((id) => this.client.endCall(id)),
      mute: () => this.toggle("muted"),
      camera: () => this.toggle("cameraOff"),
      refreshLogs: () => this.refreshLogs(),
    });
    this.render();
  }

  start() {
    const saved = Storage.session();
    this.ui.fillSignIn(Storage.lastForm());
    // A reload signs in again with what this tab used, and resumes from its seq.
    if (saved) this.signIn(saved, {automatic: true});
  }

  async signIn({uid, method, authKey, authToken}, {automatic = false} = {}) {
    if (method === "token" ? !authToken : !uid || !authKey) {
      this.ui.setSigningIn(false, method === "token" ? "Paste a token." : "Enter a user id and a key.");
      return;
    }
    this.ringtone.prepare(); // a user gesture: the ring can sound later
    this.ui.setSigningIn(true);
    const deviceId = Storage.deviceId();
    const afterSeq = Storage.seqFor({uid, method, authToken, deviceId});
    const epoch = Storage.epochFor({uid, method, authToken, deviceId});
    const attempt = ++this.signIns;
    try {
      // A reload while ringd restarts (or offline) keeps trying; only a refusal forgets the credential.
      const data = await this.client.login(method === "token" ? {token: authToken} : {uid, authKey},
        {deviceId, afterSeq, epoch, retry: automatic});
      Storage.saveSession({uid: data.user.uid, method, authKey, authToken, deviceId: data.deviceId},
        this.client.lastSeq, this.client.epoch);
      this.ui.setSigningIn(false);
    } catch (error) {
      if (attempt !== this.signIns) return; // a newer sign-in (or sign-out) took over
      if (automatic && error.code === "ERR_AUTH_FAILED") Storage.clearSession();
      this.ui.setSigningIn(false, words(error));
    }
  }

  /** Every successful auth: the first, and each reconnect. */
  authenticated(data) {
    const first = this.me === null;
    this.authentications += 1;
    this.me = data.user.uid;
    // Focus moves to the dial field on sign-in only, not on every reconnect.
    this.ui.showSignedIn(true, {uid: this.me, deviceId: data.deviceId, focus: first});
    if (data.activeCall) this.applyCall(data.activeCall);
    else if (this.call && LIVE.has(this.call.status) && !data.resumed) this.findEnd(this.call.sessionId);
    // Media flows between the browsers, not through ringd: a reconnect
    // repairs it only if it broke meanwhile.
    if (!first) this.slot.resume();
    this.ui.announce(first ? `Signed in as ${this.me}.` : "Reconnected.");
    this.refreshLogs();
  }

  /** Resume could not say how a call ended (too long away): the log knows. */
  async findEnd(sessionId) {
    await this.refreshLogs();
    const entry = this.logs.find((log) => log.sessionId === sessionId);
    if (entry) this.applyCall(entry);
    else if (this.call && this.call.sessionId === sessionId && LIVE.has(this.call.status)) {
      this.loseCall("its end is unknown"); // not "ongoing" forever
    }
  }

  /** This tab can no longer follow its call (replaced, refused, end unknown): its media goes. */
  loseCall(reason) {
    this.slot.close();
    this.ringtone.stop();
    if (!this.call || !LIVE.has(this.call.status)) return false;
    this.lost = {sessionId: this.call.sessionId, reason};
    this.render();
    return true;
  }

  signOut() {
    if (this.call && LIVE.has(this.call.status) && this.view.mine) {
      const request = this.call.status === "ongoing" ? "endCall" : roleOf(this.call, this.me) === "caller" ? "cancelCall" : null;
      if (request) this.client.request(request, {sessionId: this.call.sessionId}).catch(() => {});
    }
    this.signIns += 1;
    this.client.close("signed out");
    Storage.clearSession();
    this.slot.close();
    this.ringtone.stop();
    this.me = null;
    this.call = null;
    this.render();
    this.ui.renderLogs([]);
    this.ui.showSignedIn(false);
    this.ui.announce("Signed out.");
  }

  connectionChanged({state: clientState, reason, code, auth}) {
    const state = connectionWord(clientState);
    this.ui.setConnection(state, reason);
    if (state === "online") this.authenticated(auth);
    if (state === "reconnecting") {
      if (this.me) this.ui.announce(`Connection lost; ${reason}.`);
      else this.ui.setSigningIn(false, `Cannot reach the server; ${reason}.`); // a reload's sign-in retrying
    }
    if (state === "offline" && reason !== "signed out") {
      if (code === 4001) Storage.clearSession(); // refused: the credential is no good
      // A final stop (replaced by another tab, refused): nothing will resume the call here.
      if (!this.loseCall(reason) && this.me) this.ui.announce(`Disconnected: ${reason}.`);
    }
  }

  async dial(uid, callType) {
    if (this.call && LIVE.has(this.call.status)) return;
    if (!uid) return this.ui.announce("Enter the user id to call.");
    if (uid === this.me) return this.ui.announce(ERROR_WORDS.ERR_CALLING_SELF);
    this.ringtone.prepare();
    // The camera opens while it rings, so the caller sees themself at once
    // and the offer need not wait for it.
    const local = this.slot.openLocal(null, callType);
    try {
      // With a clientCallId of the client's: a connection lost before the
      // result sends it again after the reconnect, and gets the same call.
      const call = await this.client.initiateCall(uid, callType);
      // Glare joins the other side's call, whose type may differ: its media, not the dialled one.
      if (call.callType !== callType) this.slot.openLocal(call.sessionId, call.callType);
      else this.slot.bindLocal(local, call.sessionId);
      this.placedHere.add(call.sessionId);
      if (call.status === "ongoing") this.rangHere.add(call.sessionId); // glare: the other side's call, accepted for us
      this.applyCall(call);
    } catch (error) {
      this.slot.dropLocal(local);
      this.ui.announce(words(error));
    }
  }

  accept() {
    const call = this.call;
    if (!call || this.slot.holdsLocal(call.sessionId)) return;
    this.ringtone.stop();
    // The camera opens while the accept travels; the offer finds it ready.
    const local = this.slot.openLocal(call.sessionId, call.callType);
    return this.act((id) => this.client.acceptCall(id)).then((ok) => {
      if (!ok) this.slot.dropLocal(local);
      this.render();
    });
  }

  /** One call request at a time: a second click while one travels does nothing. */
  async act(request) {
    if (!this.call || this.acting) return false;
    this.acting = true;
    try {
      this.applyCall(await request(this.call.sessionId));
      return true;
    } catch (error) {
      this.ui.announce(words(error));
      return false;
    } finally {
      this.acting = false;
    }
  }

  toggle(flag) {
    this[flag] = !this[flag];
    this.slot.setSwitches({muted: this.muted, cameraOff: this.cameraOff});
    this.render();
  }

  /** A call object from an event, a result, a resume or the auth snapshot. */
  applyCall(call) {
    if (!call || !this.me) return;
    const current = this.call;
    if (current && call.sessionId === current.sessionId) {
      if ((call.seq ?? 0) < (current.seq ?? 0)) return; // an older state than the one shown
    } else if (current && LIVE.has(current.status) && !LIVE.has(call.status)) {
      // Another call's end (a resumed missed call) while in this one: the log only.
      this.refreshLogs();
      return;
    } else if (current && (call.seq ?? 0) < (current.seq ?? 0) && !LIVE.has(call.status)) {
      return;
    }
    if (!current || current.sessionId !== call.sessionId) {
      this.slot.closeOtherThan(call.sessionId); // an earlier call's live media goes
      this.muted = this.cameraOff = false;
      this.slot.setSwitches({muted: false, cameraOff: false});
      if (call.status === "initiated") this.rangHere.add(call.sessionId);
    }
    this.call = call;
    this.lost = null;
    const mine = isMine(call, this.me, this.client.deviceId, this.placedHere.has(call.sessionId));
    // A page that never saw this call ring joins one already going (it was reloaded).
    if (call.status === "ongoing" && mine) {
      this.slot.ensure(call, roleOf(call, this.me), {rejoin: !this.rangHere.has(call.sessionId)});
    } else if (call.status !== "initiated" && this.slot.busy) {
      this.slot.close();
    }
    this.render();
    if (!LIVE.has(call.status)) this.refreshLogs();
  }

  receiveSignal(frame) {
    this.slot.receive(frame, this.call ? this.call.sessionId : null);
  }

  render() {
    const call = this.call;
    let view = describeCall(call, {
      me: this.me, deviceId: this.client.deviceId, placedHere: call && this.placedHere.has(call.sessionId),
      muted: this.muted, cameraOff: this.cameraOff,
      hasCamera: call ? call.callType === "video" && this.slot.hasTrack("video") : false,
      hasMicrophone: this.slot.hasTrack("audio"),
    });
    if (call && this.lost && this.lost.sessionId === call.sessionId) view = lostView(view, this.lost.reason);
    const before = this.view ? this.view.state : "idle";
    this.view = view;
    this.ui.renderCall(view);
    if (view.videos) this.slot.showLocal();

    if (view.state === "incoming") {
      this.ringtone.play("ring");
      // The ring shows: tell ringd, so the caller sees "ringing" rather than "calling".
      if (!this.acknowledged.has(call.sessionId)) {
        this.acknowledged.add(call.sessionId);
        this.client.ringing(call.sessionId).catch(() => {});
      }
    }
    else if (view.state === "outgoing" && view.mine) this.ringtone.play("ringback");
    else this.ringtone.stop();
    document.body.dataset.ringing = this.ringtone.kind || "";

    // From the server's accept time, so a reload shows the true length.
    this.ui.runDuration(call && call.status === "ongoing" && view.state !== "lost" ? call.acceptedAt : null);
    if (call) this.ui.announce(`${view.title}. ${view.detail}.`);
    if (view.state === "incoming" && before !== "incoming") this.ui.focusAccept();
  }

  async refreshLogs() {
    if (!this.me) return;
    try {
      const {logs} = await this.client.callLogs({limit: 20});
      this.logs = logs;
      this.ui.renderLogs(logs);
    } catch (error) {
      console.debug("[logs]", error.code);
    }
  }
}

const phone = new Phone();
// For people and tests poking at the page from the console or WebDriver.
window.phone = {
  get state() { return document.body.dataset.callState; },
  get sessionId() { return phone.call ? phone.call.sessionId : null; },
  get call() { return phone.call; },
  get pc() { return phone.slot.pc; },
  get ringing() { return phone.ringtone.kind; },
  get audio() { return phone.ringtone.context ? phone.ringtone.context.state : null; }, // the tones' AudioContext
  get connection() { return connectionWord(phone.client.state); },
  get authentications() { return phone.authentications; }, // 1, then one more per reconnect
  get uid() { return phone.me; },
  get deviceId() { return phone.client.deviceId; },
  get logs() { return phone.logs; },
  get relay() { return RELAY; },
};
phone.start();
