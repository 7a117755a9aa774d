// ringd-client.d.ts as an app's TypeScript uses it: `make node-test` type-checks
// this file (tsc --strict, Debian's node-typescript) and runs nothing of it, so
// the declarations stay valid and match the documented API (docs/WEB.md).

import {RingdClient, RingdError, Call, CallLog, ConnectionChange} from "../../Sources/PhoneAssets/web/ringd-client";

export async function placeAndEnd(client: RingdClient): Promise<CallLog[]> {
  const auth = await client.login({uid: "alice", authKey: "ringd-dev-auth-key"}, {deviceId: "laptop", retry: true});
  const active: Call | null = auth.activeCall;
  const stop = client.on("call", (call: Call) => call.ringingDevices?.length);
  client.on("connection", (change: ConnectionChange) => change.auth?.resumed);
  client.on("signal", ({sessionId, from, payload}) => [sessionId, from.deviceId, payload]);
  stop();
  const call = await client.initiateCall("bob", "video", {metadata: {topic: "standup"}, clientCallId: "c-1"});
  await client.ringing(call.sessionId).catch((error: RingdError) => error.retryAfterMs);
  await client.signal(call.sessionId, {kind: "offer", sdp: "v=0"});
  await client.rejectCall(call.sessionId, {reason: "busy now", status: "busy"});
  await client.setDoNotDisturb("silent", {until: Date.now() + 60_000});
  await client.registerPushToken({platform: "fcm", token: "t"});
  const {url, token} = await client.mediaToken(call.sessionId);
  const {logs, next} = await client.callLogs({limit: 5, callStatus: "missed", direction: "incoming"});
  client.close(`${url} ${token} ${next} ${active?.sessionId}`);
  return logs;
}

// A client whose WebSocket comes from elsewhere (Node before 22: require("ws")).
export const other = new RingdClient({url: "ws://127.0.0.1:8787/v1/ws", reconnect: {firstDelayMs: 50}, WebSocket: class {}});
