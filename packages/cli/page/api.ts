// Talking to the manager that served the page (/api/*): the session, calls, and the live view.
// What the answers hold is declared here too; the manager's side is ../src/commands/manager.ts.

export interface License {
  project_id: string;
  valid: boolean;
  reason: string | null;
  source: 'online' | 'cache' | 'offline';
  code_hint: string | null;
  activations: number | null;
  max_activations: number | null;
  checked_at?: string | null;
  validated_at: string | null;
  grace_until: string | null;
  /** The signed ticket's text (docs/signed-ticket.md), when one is stored: the agent's `valid` already follows the vendor's signature. */
  signed_ticket?: string;
}
export interface Product {
  project_id: string;
  name: string | null;
}
export interface Snapshot {
  namespace: string;
  program: string;
  agent: { running: true; agent: string } | { running: false; problem: string; start: string; install: string };
  products: Product[];
  licenses: License[];
}

/** A refusal in words the page shows as they are. */
export class PageError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// The session: given once for the start token, kept in this tab's sessionStorage (this origin's
// alone, port included; a reload keeps it) and sent in a header on every call. Never a cookie:
// every port of 127.0.0.1 would receive it.
const SESSION_KEY = 'plugin-license-session';
let session: string | null = storedSession();

/**
 * The session this tab was given, if any. A window another page opened (with an opener) gets a
 * copy of its tab's sessionStorage, whatever that page's origin: such a window uses none, so a
 * page of another port cannot open a working license manager it holds a handle on.
 */
function storedSession(): string | null {
  if (window.opener !== null) return null;
  try {
    return sessionStorage.getItem(SESSION_KEY);
  } catch {
    return null;
  }
}

/** Keeps a session given by the manager, or forgets a refused one (null). */
function keepSession(value: string | null): void {
  session = value;
  try {
    if (value === null) sessionStorage.removeItem(SESSION_KEY);
    else sessionStorage.setItem(SESSION_KEY, value);
  } catch {
    // Storage turned off: the session lives as long as the page, without a reload.
  }
}

/** A call to the manager: the session in its header, never a cookie (none is sent or kept). */
export function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (session !== null) headers.Authorization = `Bearer ${session}`;
  return fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
}

/** POST /api/NAME with a JSON body; the manager's refusal (in the CLI's words) is thrown as it is. */
export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  let res: Response;
  try {
    res = await call(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  } catch {
    throw new PageError('manager_gone', 'The license manager is not running any more. Open it again from your plugin or installer.');
  }
  const answer = (await res.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  if (!res.ok) throw new PageError(answer.error?.code ?? 'failed', sentence(answer.error?.message ?? `The license manager answered ${res.status}.`));
  return answer as T;
}

/** A message of the CLI (lower case, no final stop) as a sentence. */
function sentence(text: string): string {
  const t = text.trim();
  return t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? '' : '.');
}

/** What the live view says: the snapshot, or why there is none. */
export interface View {
  snapshot: Snapshot | null;
  problem: string | null;
}

/** Reads an event stream (`event:` and `data:` lines, a blank line after each event) until it ends. */
async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (name: string, data: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      let name = 'message';
      const data: string[] = [];
      for (const line of buffer.slice(0, end).split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      buffer = buffer.slice(end + 2);
      if (data.length > 0) onEvent(name, data.join('\n'));
    }
  }
}

/** How long the live view waits before connecting again after the manager stopped answering. */
const RECONNECT_MS = 2000;

/**
 * The session and the live view, started as soon as the script runs (not in an effect, which
 * waits for a frame): the token, if any, is exchanged for a session and taken out of the address
 * bar at once (the link works once), then the live view is read with `fetch`, which carries the
 * session header (an EventSource cannot).
 */
export function live(onView: (change: Partial<View>) => void): void {
  const notAnswering = (): void => {
    onView({ problem: 'The license manager is not answering (it stops by itself when no page has been open for a while). Open it again from your plugin or installer.' });
    setTimeout(() => void connect(), RECONNECT_MS);
  };
  const connect = async (): Promise<void> => {
    let res: Response;
    try {
      res = await call('/api/events');
    } catch {
      return notAnswering();
    }
    if (!res.ok || res.body === null) {
      // Refused (no session, or a session of an earlier start): said in words, not tried again.
      if (res.status === 401) keepSession(null);
      const body = (await res.json().catch(() => ({}))) as { error?: { message: string } };
      onView({ problem: sentence(body.error?.message ?? 'this page cannot reach the license manager') });
      return;
    }
    try {
      await readEvents(res.body, (name, data) => {
        if (name === 'state') onView({ snapshot: JSON.parse(data) as Snapshot, problem: null });
      });
    } catch {
      // The connection broke: as if it ended.
    }
    notAnswering();
  };
  const token = /[#&]token=([^&]+)/.exec(location.hash)?.[1];
  if (!token) {
    void connect();
    return;
  }
  history.replaceState(null, '', location.pathname);
  void post<{ session: string }>('/api/session', { token }).then(
    (r) => {
      keepSession(r.session);
      void connect();
    },
    (err: Error) => {
      // A link used twice: this tab may still have its session (a reload does not come here:
      // the token is gone from the address bar); otherwise the refusal is said as it is.
      if (session !== null) void connect();
      else onView({ problem: err.message });
    },
  );
}
