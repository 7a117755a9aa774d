// Ring tones made with Web Audio, so the page ships no sound files: the
// callee hears a ring (two short bursts, then a pause, like a British
// phone), the caller a ringback (one long tone per cycle, like the North
// American one). Both are 440 Hz + 480 Hz, the classic telephone pair.
//
// Browsers start an AudioContext only after a user gesture: prepare() is
// called from the sign-in and call buttons; a tone asked for before that
// stays silent but is still reported as playing (`kind`), so the page and
// its test can tell that it rings.

const CADENCES = {
  // [on, off] pairs in seconds, repeated.
  ring: [0.4, 0.2, 0.4, 2.0],
  ringback: [2.0, 4.0],
};
const VOLUME = {ring: 0.18, ringback: 0.1};

export class Ringtone {
  constructor() {
    this.context = null;
    this.kind = null; // "ring", "ringback" or null
    this.timer = null;
    this.nodes = [];
  }

  /** Makes (or wakes) the AudioContext; call from a user gesture. */
  prepare() {
    const AudioContext = window.AudioContext || window.webkitAudioContext;
    if (!AudioContext) return;
    if (!this.context) this.context = new AudioContext();
    if (this.context.state === "suspended") this.context.resume().catch(() => {});
  }

  /** Starts `kind` ("ring" or "ringback"), replacing any tone playing. */
  play(kind) {
    if (this.kind === kind) return;
    this.stop();
    this.kind = kind;
    this.prepare();
    this.cycle();
  }

  stop() {
    this.kind = null;
    clearTimeout(this.timer);
    this.timer = null;
    for (const node of this.nodes) {
      try {
        node.stop();
      } catch {
        // already stopped
      }
    }
    this.nodes = [];
  }

  /**
   * Schedules one cadence cycle on the audio clock, then the next one just
   * before it ends (a timer only for the hand-over: the tones themselves
   * are timed by the audio clock, which does not drift).
   */
  cycle() {
    const kind = this.kind;
    if (!kind) return;
    const cadence = CADENCES[kind];
    const total = cadence.reduce((a, b) => a + b, 0);
    const context = this.context;
    if (context && context.state !== "closed") {
      let at = context.currentTime + 0.05;
      this.nodes = this.nodes.filter((node) => node.endsAt > context.currentTime);
      for (let i = 0; i < cadence.length; i += 2) {
        this.burst(context, at, cadence[i], VOLUME[kind]);
        at += cadence[i] + cadence[i + 1];
      }
    }
    this.timer = setTimeout(() => this.cycle(), total * 1000);
  }

  burst(context, at, length, volume) {
    const gain = context.createGain();
    gain.gain.setValueAtTime(0, at);
    // Short ramps: a tone switched on at full level clicks.
    gain.gain.linearRampToValueAtTime(volume, at + 0.02);
    gain.gain.setValueAtTime(volume, at + length - 0.02);
    gain.gain.linearRampToValueAtTime(0, at + length);
    gain.connect(context.destination);
    for (const frequency of [440, 480]) {
      const oscillator = context.createOscillator();
      oscillator.frequency.value = frequency;
      oscillator.connect(gain);
      oscillator.start(at);
      oscillator.stop(at + length);
      oscillator.endsAt = at + length;
      this.nodes.push(oscillator);
    }
  }
}
