// What the page remembers, and where. localStorage (this browser profile):
// the device id, so that a reload or a new tab is the same device to ringd,
// and the last user id, to fill the form. sessionStorage (this tab only,
// gone when it closes): the credential and the largest seq seen, so that a
// reload signs in again by itself and resumes where it was.

const DEVICE = "ringd.phone.deviceId";
const FORM = "ringd.phone.form";
const SESSION = "ringd.phone.session";

function read(storage, key) {
  try {
    const text = storage.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return null; // storage disabled, or a value we did not write
  }
}

function write(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or a full quota: the page works, it just forgets.
  }
}

export const Storage = {
  /** A device id for this browser profile: "web-" and 16 hex digits. */
  deviceId() {
    let id = read(localStorage, DEVICE);
    if (typeof id !== "string" || !/^[A-Za-z0-9._@-]{1,100}$/.test(id)) {
      const bytes = new Uint8Array(8);
      crypto.getRandomValues(bytes);
      id = "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      write(localStorage, DEVICE, id);
    }
    return id;
  },

  lastForm() {
    return read(localStorage, FORM) || {};
  },

  session() {
    return read(sessionStorage, SESSION);
  },

  saveSession({uid, method, authKey, authToken, deviceId}, seq, epoch) {
    write(localStorage, FORM, {uid, method});
    write(sessionStorage, SESSION, {uid, method, authKey, authToken, deviceId, seq, epoch});
  },

  saveSeq(seq, epoch) {
    const session = read(sessionStorage, SESSION);
    if (session) write(sessionStorage, SESSION, {...session, seq, epoch});
  },

  /** The seq to resume from: only for the same user, credential and device. */
  seqFor({uid, method, authToken, deviceId}) {
    const session = read(sessionStorage, SESSION);
    if (!session || typeof session.seq !== "number" || session.deviceId !== deviceId) return null;
    const same = method === "token" ? session.authToken === authToken : session.uid === uid;
    return same ? session.seq : null;
  },

  /** The store epoch of that seq, or null (kept by an older page, or none). */
  epochFor(who) {
    if (this.seqFor(who) === null) return null;
    const epoch = read(sessionStorage, SESSION).epoch;
    return typeof epoch === "string" ? epoch : null;
  },

  clearSession() {
    write(sessionStorage, SESSION, null);
  },
};
