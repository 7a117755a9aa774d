// What the page says about a call: from a call object, the signed-in user
// and this device, the state name (body[data-call-state]), the words, and
// which controls apply. Pure, so that every case reads in one place.

export const LIVE = new Set(["initiated", "ongoing"]);

export const ERROR_WORDS = {
  ERR_CALLING_SELF: "You cannot call yourself.",
  ERR_CALL_BUSY_SELF: "You are already in a call.",
  ERR_CALL_USER_ALREADY_JOINED: "The call was answered on another device.",
  ERR_AUTH_FAILED: "Sign-in refused: unknown key or bad token.",
  CLIENT_CLOSED: "Not connected to the server.",
  CLIENT_CONNECT_FAILED: "Cannot reach the server.",
  CLIENT_TIMEOUT: "The server did not answer in time.",
  ERR_RATE_LIMITED: "Too many requests; try again in a moment.",
};
export const words = (error) => ERROR_WORDS[error.code] || error.message || String(error);

export function roleOf(call, me) {
  return call.initiator.uid === me ? "caller" : "callee";
}

export function peerOf(call, me) {
  return roleOf(call, me) === "caller" ? call.receiver.uid : call.initiator.uid;
}

/**
 * Whether this device is the one in the call: the caller's that placed it
 * (`initiatorDevice`; null for calls stored before ringd recorded it, when
 * the page that placed it is taken at its word) or the callee's that accepted it.
 */
export function isMine(call, me, deviceId, placedHere) {
  if (roleOf(call, me) === "caller") {
    return call.initiatorDevice ? call.initiatorDevice === deviceId : placedHere;
  }
  return call.acceptedBy === deviceId;
}

const REASONS = {
  hangup: "hung up",
  connection_lost: "connection lost",
  server_shutdown: "server shut down",
  server_restart: "server restarted",
  timeout: "no answer",
};

/** Who ended a call and how: "You hung up", "bob hung up", "connection lost". */
function endedText(call, me) {
  const reason = REASONS[call.endReason] || call.endReason || "";
  if (!call.endedBy) return reason ? `Ended: ${reason}` : "Ended";
  const who = call.endedBy === me ? "You" : call.endedBy;
  if (call.endReason === "hangup") return `${who} hung up`;
  if (call.endReason === "cancelled") return `${who} cancelled`;
  return `${who}: ${reason}`;
}

export const IDLE_VIEW = {
  state: "idle",
  title: "No call",
  detail: "Nobody is calling.",
  buttons: new Set(["dial"]),
  videos: false,
};

/** The view of `call` (null: idle) for main.js to hand to ui.renderCall. */
export function describeCall(call, {me, deviceId, placedHere, muted, cameraOff, hasCamera, hasMicrophone}) {
  if (!call) return {...IDLE_VIEW};
  const role = roleOf(call, me);
  const peer = peerOf(call, me);
  const type = call.callType === "video" ? "Video" : "Audio";
  const mine = isMine(call, me, deviceId, placedHere);
  const base = {sessionId: call.sessionId, callType: call.callType, peer, role, mine, muted, cameraOff, videos: false};

  switch (call.status) {
    case "initiated":
      if (role === "caller") {
        // "Ringing" only once a callee device said it shows the call (`ringing`).
        const rang = (call.ringingDevices || []).length;
        const progress = rang === 0 ? "calling" : rang === 1 ? "ringing" : `ringing on ${rang} devices`;
        return {...base, state: "outgoing", title: `Calling ${peer}…`,
          detail: mine ? `${type} call · ${progress}` : `${type} call · ${progress}, placed on another of your devices`,
          buttons: new Set(["cancel"]), videos: mine && call.callType === "video"};
      }
      return {...base, state: "incoming", title: `${peer} is calling`, detail: `Incoming ${type.toLowerCase()} call`,
        buttons: new Set(["accept", "reject", "busy"])};
    case "ongoing":
      if (!mine) {
        return {...base, state: "elsewhere",
          title: role === "callee" && call.acceptedBy ? "Answered on another device" : `In call with ${peer} on another device`,
          detail: `${type} call`, buttons: new Set(["hang-up"])};
      }
      // An audio call shows no video; its hidden <video> still plays the sound.
      return {...base, state: "ongoing", title: `In call with ${peer}`, detail: `${type} call`,
        videos: call.callType === "video",
        buttons: new Set(["hang-up", ...(hasMicrophone ? ["mute"] : []), ...(hasCamera ? ["camera"] : [])])};
    default:
      return {...base, ...terminalWords(call, role, peer, me), state: call.status, buttons: new Set(["dial"])};
  }
}

/** A live call this tab lost track of (another tab took over, sign-in refused, its end unknown). */
export function lostView(view, reason) {
  return {...view, state: "lost", title: `Call with ${view.peer} lost on this tab`,
    detail: reason ? reason.charAt(0).toUpperCase() + reason.slice(1) : "Lost", buttons: new Set(["dial"]), videos: false};
}

function terminalWords(call, role, peer, me) {
  const caller = role === "caller";
  switch (call.status) {
    case "ended":
      return {title: `Call with ${peer} ended`, detail: endedText(call, me), duration: call.durationMs};
    case "rejected":
      return caller ? {title: `${peer} declined`, detail: "Rejected"}
        : {title: `Declined call from ${peer}`, detail: call.endedBy === me ? "Rejected" : "Rejected on another device"};
    case "busy":
      return caller ? {title: `${peer} is busy`, detail: "Busy"}
        : {title: `Missed call from ${peer}`, detail: "Busy"};
    case "cancelled":
      return caller ? {title: `Call to ${peer} cancelled`, detail: endedText(call, me)}
        : {title: `Missed call from ${peer}`, detail: `Cancelled${call.endReason === "connection_lost" ? " (connection lost)" : ""}`};
    case "unanswered":
      if (call.endReason === "unreachable") {
        return caller ? {title: `${peer} is unreachable`, detail: "Unreachable"}
          : {title: `Missed call from ${peer}`, detail: "Unreachable"};
      }
      return caller ? {title: `No answer from ${peer}`, detail: "Unanswered"}
        : {title: `Missed call from ${peer}`, detail: "Unanswered"};
    default:
      return {title: `Call with ${peer}`, detail: call.status};
  }
}
