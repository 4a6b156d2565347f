// The typed facade client. One function per method of docs/api.md; the
// transport is chosen at call time: Wails bindings when the desktop window
// injected them, else the loopback HTTP bridge of `gatehouse serve`.

import type { ApiMethods, EventName, EventPayloads, MethodName } from './types';

/** The facade's methods, in the order of the table in docs/api.md. A Go
 * test compares this list with the Go facade's method set. */
export const METHODS = [
  'AppInfo',
  'ListSkills',
  'InspectSkill',
  'StartRun',
  'PendingProposals',
  'Decide',
  'ProposalFile',
  'PendingPlans',
  'DecidePlan',
  'PendingGrants',
  'DecideGrant',
  'CancelRun',
  'ListRuns',
  'RunEvents',
  'GetPolicy',
  'SetPolicy',
  'ListAgents',
  'AddAgent',
  'SetAgentDisabled',
  'RemoveAgent',
  'GetRuntime',
  'RepinRuntime',
  'GetSkillRoots',
  'SetSkillRoots',
  'GetCapturePolicy',
  'SetCapturePolicy',
  'GetSecurity',
  'SetSecurity',
  'ListEvidence',
  'GetEvidence',
  'ImportEvidence',
  'DeleteEvidence',
  'ShareEvidence',
  'AttestEvidence',
  'StartCapture',
  'CancelCapture',
  'SigningKeys',
  'RotateSigningKey',
  'TrustSigningKey',
  'UntrustSigningKey',
  'CompareCaptures',
  'CompareDiffPage',
  'OpenComparison',
  'ExportAsciicast',
  'ImportAsciicast',
  'GetAttention',
  'SetAttention',
] as const;

// Compile-time check that METHODS and ApiMethods name the same set.
type Listed = (typeof METHODS)[number];
const _everyMethodListed: [MethodName] extends [Listed] ? ([Listed] extends [MethodName] ? true : never) : never = true;
void _everyMethodListed;

type WailsFacade = { [K in MethodName]?: (args: unknown) => Promise<unknown> };

declare global {
  interface Window {
    go?: { app?: { Facade?: WailsFacade } };
    runtime?: { EventsOn?: (name: string, cb: (...data: unknown[]) => void) => (() => void) | void };
  }
}

/** A failed call: the facade's structured error, or a transport failure
 * (code `unreachable`, category `transport`). */
export class ApiError extends Error {
  readonly code: string;
  readonly category: string;
  readonly details: unknown;
  /** HTTP status in browser mode (0 for transport failures and desktop). */
  readonly status: number;

  constructor(init: { code: string; category: string; message: string; details?: unknown; status?: number }) {
    super(init.message);
    this.name = 'ApiError';
    this.code = init.code;
    this.category = init.category;
    this.details = init.details;
    this.status = init.status ?? 0;
  }
}

function isErrorBody(v: unknown): v is { code: string; category?: string; message?: string; details?: unknown } {
  return typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'string';
}

/** Turns a Wails rejection (an Error, a plain string, or the JSON text of
 * the structured error) into an ApiError. */
export function toApiError(reason: unknown, status = 0): ApiError {
  if (reason instanceof ApiError) return reason;
  let v: unknown = reason;
  if (reason instanceof Error) v = reason.message;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t.startsWith('{')) {
      try {
        v = JSON.parse(t);
      } catch {
        /* plain message */
      }
    }
  }
  if (isErrorBody(v)) {
    return new ApiError({
      code: v.code,
      category: typeof v.category === 'string' ? v.category : 'error',
      message: typeof v.message === 'string' ? v.message : v.code,
      details: v.details,
      status,
    });
  }
  return new ApiError({ code: 'error', category: 'internal', message: typeof v === 'string' ? v : String(v), status });
}

// ---- the browser-mode session -------------------------------------------
//
// The UI token lives in this tab's sessionStorage (scoped to this origin,
// port included) and goes out as "Authorization: Bearer"; no cookie ever
// carries it, so no other server on 127.0.0.1 can receive it. The printed
// URL brings it as ?token=…, `serve --open` as a one-time ?open=<nonce>
// exchanged once at /session/open; either is then removed from the address
// bar.

const TOKEN_KEY = 'gatehouse.token';

function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

async function startSession(): Promise<void> {
  if (typeof window === 'undefined' || typeof location === 'undefined' || wails()) return;
  const url = new URL(location.href);
  const token = url.searchParams.get('token');
  const nonce = url.searchParams.get('open');
  if (token === null && nonce === null) return;
  url.searchParams.delete('token');
  url.searchParams.delete('open');
  history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    return;
  }
  try {
    const r = await fetch('/session/open', { method: 'POST', credentials: 'omit', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ nonce }) });
    const body = (await r.json()) as { token?: unknown };
    if (r.ok && typeof body.token === 'string') sessionStorage.setItem(TOKEN_KEY, body.token);
  } catch {
    /* no session: calls answer 401 and the page says how to sign in */
  }
}

const session: Promise<void> = startSession();

/** The request headers of a bridge call: the bearer token when this tab has one. */
async function authHeaders(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  await session;
  const t = storedToken();
  return t ? { ...extra, Authorization: `Bearer ${t}` } : extra;
}

const sessionLostListeners = new Set<() => void>();
/** Called when the bridge answers 401 (this tab has no valid token, e.g.
 * after `gatehouse serve` restarted). */
export function onSessionLost(cb: () => void): () => void {
  sessionLostListeners.add(cb);
  return () => sessionLostListeners.delete(cb);
}

function wails(): WailsFacade | undefined {
  return typeof window !== 'undefined' ? window.go?.app?.Facade : undefined;
}

/** Which transport calls use right now. */
export function shellKind(): 'desktop' | 'browser' {
  return wails() ? 'desktop' : 'browser';
}

async function call<M extends MethodName>(method: M, args: ApiMethods[M]['args']): Promise<ApiMethods[M]['result']> {
  return (await send(method, args)).result;
}

/** A call's result with the exact JSON text it arrived as (null in the
 * desktop shell, whose bindings hand over parsed values): a web worker
 * can parse its own copy of a large result instead of the page cloning
 * the parsed one. */
export function callWithText<M extends MethodName>(method: M, args: ApiMethods[M]['args']): Promise<{ result: ApiMethods[M]['result']; text: string | null }> {
  return send(method, args);
}

async function send<M extends MethodName>(method: M, args: ApiMethods[M]['args']): Promise<{ result: ApiMethods[M]['result']; text: string | null }> {
  const w = wails();
  if (w) {
    const fn = w[method];
    if (typeof fn !== 'function') {
      throw new ApiError({ code: 'unknown_method', category: 'not_found', message: `the desktop bindings have no ${method}` });
    }
    try {
      return { result: (await fn(args ?? {})) as ApiMethods[M]['result'], text: null };
    } catch (e) {
      throw toApiError(e);
    }
  }
  let res: Response;
  try {
    res = await fetch('/api/' + method, {
      method: 'POST',
      credentials: 'omit',
      headers: await authHeaders({ 'Content-Type': 'application/json' }),
      body: JSON.stringify(args ?? {}),
    });
  } catch (e) {
    throw new ApiError({
      code: 'unreachable',
      category: 'transport',
      message: 'Gatehouse is not reachable. Is “gatehouse serve” still running?',
      details: String(e),
    });
  }
  const text = await res.text();
  let body: unknown = undefined;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!res.ok) {
    if (res.status === 401) sessionLostListeners.forEach((cb) => cb());
    if (isErrorBody(body)) throw toApiError(body, res.status);
    throw new ApiError({
      code: `http_${res.status}`,
      category: res.status === 401 || res.status === 403 ? 'auth' : 'transport',
      message: typeof body === 'string' && body.trim() !== '' ? body.trim() : `${method} failed (HTTP ${res.status})`,
      status: res.status,
    });
  }
  return { result: body as ApiMethods[M]['result'], text };
}

type Client = { [M in MethodName]: (args: ApiMethods[M]['args']) => Promise<ApiMethods[M]['result']> };

/** `api.<Method>(args)`: one typed function per facade method. */
export const api: Client = Object.fromEntries(
  METHODS.map((m) => [m, (args: unknown) => call(m, args as never)]),
) as unknown as Client;

// ---- events -------------------------------------------------------------

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'desktop';

type Listener = (data: unknown) => void;
const listeners = new Map<string, Set<Listener>>();
const connectionListeners = new Set<(s: ConnectionState) => void>();
const reconnectListeners = new Set<() => void>();
let connection: ConnectionState = 'connecting';
let source: AbortController | null = null;
let everOpened = false;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let retryDelay = 1000;
const wailsUnsubscribers = new Map<string, () => void>();

function setConnection(s: ConnectionState): void {
  if (s === connection) return;
  connection = s;
  connectionListeners.forEach((cb) => cb(s));
}

function dispatch(name: string, raw: unknown): void {
  let data = raw;
  if (typeof raw === 'string') {
    try {
      data = JSON.parse(raw);
    } catch {
      return; // not ours
    }
  }
  listeners.get(name)?.forEach((cb) => {
    try {
      cb(data);
    } catch (e) {
      console.error(`gatehouse: ${name} listener failed`, e);
    }
  });
}

/** Reads one server-sent-events stream and dispatches each event by name
 * (comments and keepalives are skipped). */
async function readEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  while (!signal.aborted) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) dispatch(name, data.join('\n'));
    }
  }
}

/** Follows GET /api/events with a streaming fetch (EventSource cannot
 * send the bearer token), reconnecting with backoff. */
function openEventSource(): void {
  if (typeof fetch === 'undefined' || typeof window === 'undefined') return;
  clearTimeout(retryTimer);
  const ctl = new AbortController();
  source = ctl;
  const retry = () => {
    if (source !== ctl) return;
    setConnection('reconnecting');
    source = null;
    retryTimer = setTimeout(() => {
      if (!source) openEventSource();
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 15000);
  };
  void (async () => {
    try {
      const res = await fetch('/api/events', { credentials: 'omit', headers: await authHeaders({ Accept: 'text/event-stream' }), signal: ctl.signal, cache: 'no-store' });
      if (!res.ok || !res.body) {
        if (res.status === 401) sessionLostListeners.forEach((cb) => cb());
        retry();
        return;
      }
      retryDelay = 1000;
      setConnection('open');
      if (everOpened) reconnectListeners.forEach((cb) => cb());
      everOpened = true;
      await readEvents(res.body, ctl.signal);
    } catch {
      /* network error or abort: reconnect below */
    }
    retry();
  })();
}

function ensureSubscribed(name: string): void {
  const rt = typeof window !== 'undefined' ? window.runtime : undefined;
  if (wails() && rt?.EventsOn) {
    setConnection('desktop');
    if (!wailsUnsubscribers.has(name)) {
      const off = rt.EventsOn(name, (...data: unknown[]) => dispatch(name, data[0]));
      wailsUnsubscribers.set(name, typeof off === 'function' ? off : () => {});
    }
    return;
  }
  if (!source) openEventSource(); // one stream carries every event name
}

/** Subscribes to one facade event; returns the unsubscribe function. All
 * subscriptions share one event stream (browser) or use Wails events. */
export function onEvent<N extends EventName>(name: N, cb: (data: EventPayloads[N]) => void): () => void {
  let set = listeners.get(name);
  const fresh = !set;
  if (!set) {
    set = new Set();
    listeners.set(name, set);
  }
  set.add(cb as Listener);
  if (fresh) ensureSubscribed(name);
  else if (!source && !wails()) openEventSource();
  return () => {
    set.delete(cb as Listener);
  };
}

/** Follows the event connection (for the "reconnecting…" indicator). */
export function onConnection(cb: (s: ConnectionState) => void): () => void {
  connectionListeners.add(cb);
  cb(connection);
  return () => connectionListeners.delete(cb);
}

/** Called after the event stream came back: events may have been missed,
 * so views reload what they show. */
export function onReconnect(cb: () => void): () => void {
  reconnectListeners.add(cb);
  return () => reconnectListeners.delete(cb);
}
