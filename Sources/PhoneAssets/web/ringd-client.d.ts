// Types of ringd-client.js (docs/WEB.md): the ringing protocol of ringd
// (docs/PROTOCOL.md) for web apps, React Native and Node.

export type CallType = "audio" | "video";
export type CallStatus = "initiated" | "ongoing" | "ended" | "rejected" | "busy" | "cancelled" | "unanswered";
export type ConnectionState = "disconnected" | "connecting" | "connected" | "reconnecting";
export type DoNotDisturbMode = "busy" | "silent" | "off";
export type JSONValue = null | boolean | number | string | JSONValue[] | {[key: string]: JSONValue};

export interface Party {
  uid: string;
  name?: string;
  avatarUrl?: string;
}

/** The call object (docs/PROTOCOL.md, "The call object"). */
export interface Call {
  sessionId: string;
  callType: CallType;
  receiverType: "user";
  status: CallStatus;
  initiator: Party;
  receiver: Party;
  initiatorDevice: string | null;
  initiatedAt: number;
  acceptedAt: number | null;
  endedAt: number | null;
  durationMs: number | null;
  acceptedBy: string | null;
  endedBy: string | null;
  endReason: string | null;
  timeout: number;
  timeoutMs: number;
  metadata: {[key: string]: JSONValue} | null;
  seq: number;
  ringingDevices?: string[];
  rejectReason?: string;
  silent?: true;
  clientCallId?: string;
}

export interface CallLog extends Call {
  direction: "incoming" | "outgoing";
  missed: boolean;
}

export interface CallLogFilter {
  limit?: number;
  cursor?: string;
  callType?: CallType;
  callStatus?: CallStatus | "missed";
  direction?: "incoming" | "outgoing";
  with?: string;
}

export interface PushRegistration {
  platform: "apns-voip" | "fcm";
  token: string;
  topic?: string;
  environment?: "production" | "sandbox";
  alertToken?: string;
}

export interface PushToken extends PushRegistration {
  uid: string;
  deviceId: string;
  updatedAt: number;
}

export interface DoNotDisturb {
  mode: DoNotDisturbMode;
  until?: number;
}

export interface MediaToken {
  url: string;
  token: string;
  expiresAt: number;
}

export interface IceServers {
  iceServers: {urls: string[]; username?: string; credential?: string}[];
  expiresAt: number | null;
}

/** The auth result's data (docs/PROTOCOL.md, "Connect and authenticate"). */
export interface AuthResult {
  user: {uid: string};
  deviceId: string;
  activeCall: Call | null;
  seq: number;
  /** The store epoch `seq` and the call objects' positions are of. */
  epoch?: string;
  resumed?: boolean;
  calls?: Call[];
  doNotDisturb?: DoNotDisturb;
}

export interface SignalFrame {
  type: "signal";
  sessionId: string;
  from: {uid: string; deviceId: string};
  payload: {[key: string]: JSONValue};
}

export interface ConnectionChange {
  state: ConnectionState;
  reason: string;
  /** The close code of the socket that ended, when one did (4001 refused, 4003 replaced). */
  code: number | null;
  /** On "connected": the auth result of this login or reconnect. */
  auth: AuthResult | null;
  /** On "reconnecting": the wait before the next attempt. */
  delayMs: number | null;
}

export interface RingdEvents {
  call: Call;
  signal: SignalFrame;
  connection: ConnectionChange;
  seq: number;
}

export interface ReconnectPolicy {
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export interface RingdClientOptions {
  /** ws:// or wss:// …/v1/ws; default: the server that served the page. */
  url?: string;
  /** true (default: 0.5 s doubling to 15 s, with jitter), false, or the delays. */
  reconnect?: boolean | ReconnectPolicy;
  /** The WebSocket class; default globalThis.WebSocket (Node before 22: pass `require("ws")`). */
  WebSocket?: unknown;
  /** How long a request waits for its result (default 10000). */
  requestTimeoutMs?: number;
}

export type Credentials = {uid: string; authKey: string} | {token: string};

export interface LoginOptions {
  deviceId?: string | null;
  /** Resume after this position (a seq kept from before, e.g. across a page reload). */
  afterSeq?: number | null;
  /** The store epoch afterSeq is of (the auth result's epoch). */
  epoch?: string | null;
  /** Keep trying a server that cannot be reached instead of rejecting. */
  retry?: boolean;
}

export declare class RingdError extends Error {
  constructor(code: string, message?: string, options?: {retryAfterMs?: number | null; closeCode?: number | null});
  /** ERR_… from the server, or CLIENT_… (CLIENT_CLOSED, CLIENT_TIMEOUT, CLIENT_CONNECT_FAILED, …). */
  code: string;
  retryAfterMs: number | null;
  closeCode: number | null;
}

export declare class RingdClient extends EventTarget {
  constructor(options?: RingdClientOptions);
  readonly url: string;
  readonly state: ConnectionState;
  readonly uid: string | null;
  readonly deviceId: string | null;
  /** The largest seq seen: what a reconnect resumes after. */
  readonly lastSeq: number | null;
  /** The store epoch lastSeq is of. */
  readonly epoch: string | null;

  on<K extends keyof RingdEvents>(name: K, listener: (detail: RingdEvents[K]) => void): () => void;

  login(credentials: Credentials, options?: LoginOptions): Promise<AuthResult>;
  close(reason?: string): void;
  reconnectNow(): void;

  initiateCall(
    to: string,
    type: CallType,
    options?: {metadata?: {[key: string]: JSONValue}; clientCallId?: string; timeout?: number; timeoutMs?: number},
  ): Promise<Call>;
  acceptCall(sessionId: string): Promise<Call>;
  rejectCall(sessionId: string, options?: {reason?: string; status?: "rejected" | "busy"}): Promise<Call>;
  cancelCall(sessionId: string): Promise<Call>;
  endCall(sessionId: string): Promise<Call>;
  ringing(sessionId: string): Promise<Call>;
  activeCall(): Promise<Call | null>;
  callLogs(filter?: CallLogFilter): Promise<{logs: CallLog[]; next: string | null}>;
  registerPushToken(registration: PushRegistration): Promise<PushToken>;
  unregisterPushToken(): Promise<boolean>;
  setDoNotDisturb(mode: DoNotDisturbMode, options?: {until?: number}): Promise<DoNotDisturb>;
  mediaToken(sessionId: string): Promise<MediaToken>;
  iceServers(): Promise<IceServers>;
  signal(sessionId: string, payload: {[key: string]: JSONValue}): Promise<boolean>;
  /** Any request of the protocol by its type; resolves with the result's data. */
  request(type: string, params?: {[key: string]: unknown}): Promise<{[key: string]: any}>;
}

export declare function defaultServerURL(location?: {protocol: string; host: string}): string | null;
export declare function backoffDelay(attempt: number, policy?: Required<ReconnectPolicy>, random?: () => number): number;
export declare function newClientCallId(): string;
