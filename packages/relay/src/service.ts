/** What the service answered, or what the relay says in its place when it could not be asked. */
export interface ServiceAnswer {
  status: number;
  /** The headers the relay passes on: the rate limit, `Retry-After` and the service's `Date`. */
  headers: Record<string, string>;
  /** The JSON body. */
  body: unknown;
}

/** The service's headers a client needs from an answer (its wait after a 429 is measured on the service's `Date`). */
const PASSED_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'date'];

/**
 * How long the relay waits for the service: less than the library's 10 s deadline, so a client
 * hears the relay's 504 rather than its own time-out.
 */
export const SERVICE_TIMEOUT_MS = 8_000;

/**
 * An error in the service's shape (section 7: `error`, `message`, `details`): the relay answers
 * every failure of its own this way, so the library's typed client reads it as it reads the
 * service's.
 */
export function errorAnswer(status: number, error: string, message: string, details: Record<string, unknown> = {}, headers: Record<string, string> = {}): ServiceAnswer {
  return { status, headers, body: { error, message, details } };
}

/**
 * How the relay reaches the service: the shape of the api's `Carrier` (`createCarrier`), which
 * the Node adapter passes (Node's own keep-alive HTTP, or undici through a proxy the standard
 * variables name); elsewhere {@link fetchCarrier}, the platform's `fetch`.
 */
export interface ServiceCarrier {
  send(url: string, request: { method: string; headers: Record<string, string>; body: string | undefined; timeoutMs: number; signal: AbortSignal | undefined }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text(): Promise<string> }>;
}

/**
 * A carrier over the platform's `fetch` (Deno, workerd, any web runtime); an attempt that runs
 * past its time-out fails with a `TimeoutError`.
 *
 * @example
 * createRelay(config, { carrier: fetchCarrier(fetch) });
 */
export function fetchCarrier(fetchFn: typeof fetch = (input, init) => fetch(input, init)): ServiceCarrier {
  return {
    async send(url, r) {
      const res = await fetchFn(url, { method: r.method, headers: r.headers, ...(r.body === undefined ? {} : { body: r.body }), redirect: 'manual', signal: AbortSignal.timeout(r.timeoutMs) });
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => (headers[name] = value));
      return { status: res.status, headers, text: () => res.text() };
    },
  };
}

const TIMEOUTS = new Set(['TimeoutError', 'AbortError']);
const TIMEOUT_CODES = new Set(['ERR_PLC_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Calls the service. Never throws: a failure to reach it is a 502 or 504 answer in the service's shape. */
export async function askService(carrier: ServiceCarrier, o: { method: 'GET' | 'POST'; url: string; body?: string; token?: string }): Promise<ServiceAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'plugin-license-relay' };
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
  const timedOut = (e: unknown): boolean => TIMEOUTS.has(String((e as { name?: unknown }).name)) || TIMEOUT_CODES.has(String((e as { code?: unknown }).code));
  let res: Awaited<ReturnType<ServiceCarrier['send']>>;
  try {
    res = await carrier.send(o.url, { method: o.method, headers, body: o.body, timeoutMs: SERVICE_TIMEOUT_MS, signal: undefined });
  } catch (e) {
    if (timedOut(e)) return errorAnswer(504, 'service_timeout', `the service did not answer within ${SERVICE_TIMEOUT_MS / 1000} s; try again later`);
    return errorAnswer(502, 'service_unreachable', 'the relay could not reach the service; try again later', { cause: causeCode(e) });
  }
  const passed: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const v = res.headers[name];
    if (typeof v === 'string') passed[name] = v;
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    return errorAnswer(502, 'service_unreachable', 'the connection to the service broke during its answer; try again later', { cause: causeCode(e) }, passed);
  }
  try {
    return { status: res.status, headers: passed, body: JSON.parse(text) };
  } catch {
    // A proxy's HTML page, an empty body: the status is the service's, the words are the relay's.
    const status = res.status >= 400 ? res.status : 502;
    return errorAnswer(status, status >= 500 ? 'internal_error' : 'bad_gateway', `the service answered ${res.status} without a JSON body; try again later`, { service_status: res.status }, passed);
  }
}

/** A system error's code (ECONNREFUSED), never its message: a message may hold a URL, and a URL a code. */
function causeCode(e: unknown): string {
  const code = (e as { code?: unknown }).code ?? (e as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^[A-Z_0-9]{1,40}$/.test(code) ? code : 'error';
}
