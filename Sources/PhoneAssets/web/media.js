// The media of one call: the camera and microphone, one RTCPeerConnection,
// and its negotiation through ringd's `signal` relay (docs/PHONE.md).
//
// Roles: the caller's device makes the offer once the call is ongoing; the
// callee's device answers. Payloads are {kind: "offer"|"answer", sdp, pc},
// {kind: "candidate", candidate, pc} and {kind: "hello"}. `pc` names the
// sender's RTCPeerConnection: a caller that had to start a new one (its page
// was reloaded) offers with a new id, and the callee then starts afresh too,
// since a connection cannot take a peer with new DTLS keys. "hello" is a
// callee that lost its connection (a reload) asking the caller for an offer.

const log = (...args) => console.debug("[media]", ...args);

function randomId() {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The camera and microphone for a call type: both for video, the microphone
 * for audio. Falls back to less (audio only, then nothing: the call still
 * receives) rather than failing the call on a machine without a camera.
 */
export async function openLocalMedia(callType) {
  const wanted = callType === "video" ? [{audio: true, video: true}, {audio: true}] : [{audio: true}];
  let failure = null;
  for (const constraints of wanted) {
    try {
      const stream = await navigator.mediaDevices.getUserMedia(constraints);
      stream.failure = failure; // why the fuller constraints failed, if they did
      return stream;
    } catch (error) {
      log("getUserMedia failed", constraints, error.name);
      failure = failure || error.name;
    }
  }
  const none = new MediaStream();
  none.failure = failure; // NotAllowedError: the user (or a policy) denied it
  return none;
}

/**
 * Events (EventTarget): "state" whenever the connection's state changes
 * (detail: connectionState), "remote" (detail: the remote MediaStream).
 */
export class CallMedia extends EventTarget {
  /**
   * call: the call object; role: "caller" or "callee"; localMedia: a
   * promise of the local MediaStream (it may still be opening: the offer
   * waits for it, the signals queue behind); send(payload): resolves once ringd relayed (or dropped) it;
   * iceServers(): resolves with the RTCIceServer list; relay: TURN only.
   */
  constructor({call, role, localMedia, send, iceServers, relay = false}) {
    super();
    this.sessionId = call.sessionId;
    this.callType = call.callType;
    this.role = role;
    this.localMedia = localMedia;
    this.localStream = null;
    this.muted = false;
    this.cameraOff = false;
    this.sendSignal = send;
    this.fetchIceServers = iceServers;
    this.relay = relay;
    this.pc = null;
    this.pcId = null;
    this.peerPcId = null;
    this.remoteStream = new MediaStream();
    this.pendingCandidates = [];
    this.closed = false;
    // Every negotiation step runs after the previous one: a signal that
    // arrives while the connection is still being made waits for it.
    this.queue = Promise.resolve();
  }

  /** Runs `step` after everything queued; errors are logged, not thrown. */
  enqueue(step) {
    this.queue = this.queue.then(() => (this.closed ? undefined : step())).catch((error) => {
      log("negotiation step failed", error);
    });
    return this.queue;
  }

  async createConnection() {
    if (this.pc) this.pc.close();
    this.pc = null;
    if (!this.localStream) {
      this.localStream = await this.localMedia;
      this.applyTrackSwitches();
    }
    // getIceServers before every connection: minted TURN credentials expire.
    const iceServers = await this.fetchIceServers();
    if (this.closed) return;
    const config = {iceServers};
    if (this.relay) config.iceTransportPolicy = "relay";
    const pc = new RTCPeerConnection(config);
    this.pc = pc;
    this.pcId = randomId();
    this.peerPcId = null;
    this.pendingCandidates = [];
    this.remoteStream = new MediaStream();
    this.dispatchEvent(new CustomEvent("remote", {detail: this.remoteStream}));

    const have = {audio: false, video: false};
    for (const track of this.localStream.getTracks()) {
      pc.addTrack(track, this.localStream);
      have[track.kind] = true;
    }
    // Receive what the call type promises even with nothing to send.
    const kinds = this.callType === "video" ? ["audio", "video"] : ["audio"];
    for (const kind of kinds) {
      if (!have[kind]) pc.addTransceiver(kind, {direction: "recvonly"});
    }

    const id = this.pcId;
    pc.onicecandidate = (event) => {
      if (event.candidate && pc === this.pc) {
        this.sendSignal({kind: "candidate", candidate: event.candidate.toJSON(), pc: id});
      }
    };
    pc.ontrack = (event) => {
      if (pc !== this.pc) return;
      if (!this.remoteStream.getTracks().includes(event.track)) this.remoteStream.addTrack(event.track);
      this.dispatchEvent(new CustomEvent("remote", {detail: this.remoteStream}));
    };
    pc.onconnectionstatechange = () => {
      if (pc !== this.pc) return;
      log("connection", pc.connectionState);
      this.dispatchEvent(new CustomEvent("state", {detail: pc.connectionState}));
      // The caller repairs a connection that failed (a network change) with
      // an ICE restart; the callee's side follows from the new offer.
      if (pc.connectionState === "failed" && this.role === "caller") this.restartIce();
    };
    this.dispatchEvent(new CustomEvent("state", {detail: pc.connectionState}));
  }

  /**
   * The caller's first offer, on the `ongoing` event. The callee waits for
   * the offer but makes its connection now, so that the offer finds it
   * ready; one that joins a call already going (its page was reloaded)
   * asks the caller for a fresh offer.
   */
  start({rejoin = false} = {}) {
    if (this.role === "caller") return this.enqueue(() => this.offer({fresh: true}));
    return this.enqueue(async () => {
      await this.createConnection();
      if (rejoin) await this.sendSignal({kind: "hello"});
    });
  }

  /**
   * After this page reconnected to ringd while in the call: nothing when the
   * media kept flowing (it does not go through ringd); otherwise the caller
   * restarts ICE and the callee asks it to.
   */
  resume({lostConnection}) {
    const state = this.pc ? this.pc.connectionState : "new";
    if (!lostConnection && (state === "connected" || state === "connecting")) return;
    if (this.role === "caller") this.enqueue(() => this.offer({fresh: !this.pc, iceRestart: true}));
    else this.sendSignal({kind: "hello"});
  }

  restartIce() {
    return this.enqueue(() => this.offer({fresh: false, iceRestart: true}));
  }

  async offer({fresh, iceRestart = false}) {
    if (fresh || !this.pc) await this.createConnection();
    if (this.closed) return;
    const pc = this.pc;
    const description = await pc.createOffer({iceRestart});
    await pc.setLocalDescription(description);
    await this.sendSignal({kind: "offer", sdp: pc.localDescription.sdp, pc: this.pcId});
  }

  /** A `signal` frame's payload from the other device. */
  handleSignal(payload) {
    if (!payload || typeof payload !== "object") return;
    switch (payload.kind) {
      case "offer":
        this.enqueue(() => this.acceptOffer(payload));
        break;
      case "answer":
        this.enqueue(() => this.acceptAnswer(payload));
        break;
      case "candidate":
        this.enqueue(() => this.addCandidate(payload));
        break;
      case "hello":
        // The callee came back without its connection: a fresh one.
        if (this.role === "caller") this.enqueue(() => this.offer({fresh: true}));
        break;
      default:
        log("unknown signal", payload.kind);
    }
  }

  async acceptOffer({sdp, pc: peerId}) {
    if (this.role !== "callee") return;
    // A new peer connection on the caller's side needs a new one here.
    if (!this.pc || (this.peerPcId && peerId !== this.peerPcId)) await this.createConnection();
    if (this.closed) return;
    const pc = this.pc;
    this.peerPcId = peerId;
    await pc.setRemoteDescription({type: "offer", sdp});
    await this.flushCandidates();
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    await this.sendSignal({kind: "answer", sdp: pc.localDescription.sdp, pc: this.pcId});
  }

  async acceptAnswer({sdp, pc: peerId}) {
    if (this.role !== "caller" || !this.pc || this.pc.signalingState !== "have-local-offer") return;
    this.peerPcId = peerId;
    await this.pc.setRemoteDescription({type: "answer", sdp});
    await this.flushCandidates();
  }

  async addCandidate({candidate, pc: peerId}) {
    if (!candidate) return;
    // Candidates of a peer connection we no longer talk to are dropped.
    if (this.peerPcId && peerId && peerId !== this.peerPcId) {
      // ...unless it is the caller's new one, whose offer is queued behind:
      // keep it until the offer (or answer) names that id.
      this.pendingCandidates.push({candidate, peerId});
      return;
    }
    if (!this.pc || !this.pc.remoteDescription) {
      // Before the remote description a candidate cannot be added: keep it.
      this.pendingCandidates.push({candidate, peerId});
      return;
    }
    await this.pc.addIceCandidate(candidate);
  }

  async flushCandidates() {
    const waiting = this.pendingCandidates;
    this.pendingCandidates = [];
    for (const {candidate, peerId} of waiting) {
      if (peerId && this.peerPcId && peerId !== this.peerPcId) continue;
      try {
        await this.pc.addIceCandidate(candidate);
      } catch (error) {
        log("candidate refused", error);
      }
    }
  }

  // A disabled track sends silence or black frames: the connection and its
  // negotiation stay as they are, and switching back on is instant.
  setMuted(muted) {
    this.muted = muted;
    this.applyTrackSwitches();
  }

  setCameraOff(off) {
    this.cameraOff = off;
    this.applyTrackSwitches();
  }

  applyTrackSwitches() {
    if (!this.localStream) return;
    for (const track of this.localStream.getAudioTracks()) track.enabled = !this.muted;
    for (const track of this.localStream.getVideoTracks()) track.enabled = !this.cameraOff;
  }

  /** Hang-up or remote end: the connection, the camera and the microphone go. */
  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.pc) {
      this.pc.onicecandidate = this.pc.ontrack = this.pc.onconnectionstatechange = null;
      this.pc.close();
    }
    this.pc = null;
    // The camera's light goes off with the call, also when it was still opening.
    Promise.resolve(this.localMedia).then((stream) => stream.getTracks().forEach((track) => track.stop()));
    this.dispatchEvent(new CustomEvent("state", {detail: "closed"}));
  }
}
