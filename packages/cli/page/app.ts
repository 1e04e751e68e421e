// The license manager page (docs/license-manager.md): what the musician sees. It talks only to the
// manager that served it (/api/*), which talks to the agent. preact + htm, bundled by plugin.mjs.
import htm from 'htm';
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

const html = htm.bind(h);

interface License {
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
}
interface Product {
  project_id: string;
  name: string | null;
}
interface Snapshot {
  namespace: string;
  program: string;
  agent: { running: true; agent: string } | { running: false; problem: string; start: string; install: string };
  products: Product[];
  licenses: License[];
}
/** What an action said: words, and whether it went well. */
interface Said {
  ok: boolean;
  text: string;
}

// ------------------------------------------------------------------------------ talking to the manager

class PageError extends Error {
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
function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (session !== null) headers.Authorization = `Bearer ${session}`;
  return fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
}

/** POST /api/NAME with a JSON body; the manager's refusal (in the CLI's words) is thrown as it is. */
async function post<T>(path: string, body: unknown = {}): Promise<T> {
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

/** Saves text as a file the browser downloads. */
function download(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text.endsWith('\n') ? text : `${text}\n`], { type: 'text/plain' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** An offline file is a few KiB; anything far larger is the wrong file (and is not read whole). */
const MAX_FILE_BYTES = 64 * 1024;

async function readSmallFile(input: HTMLInputElement | null, what: string): Promise<string> {
  const file = input?.files?.[0];
  if (!file) throw new PageError('no_file', `Choose the ${what} first.`);
  if (file.size > MAX_FILE_BYTES) throw new PageError('too_large', `${file.name} is far larger than an ${what}: choose the ${what}.`);
  return file.text();
}

// ------------------------------------------------------------------------------ words

function reasonWords(reason: string | null): string {
  switch (reason) {
    case 'not_activated':
      return 'Not activated on this computer.';
    case 'code_revoked':
      return 'This license was revoked. Contact the vendor for a new code.';
    case 'code_not_found':
      return 'The license service does not know this code. Check it, or contact the vendor.';
    case 'deactivated':
      return 'Released from this computer (moved to another one). Activate again to use it here.';
    case 'grace_expired':
      return 'It could not be checked online for too long. Connect this computer to the internet, then press Check now.';
    case 'clock_tampered':
      return "This computer's clock looks wrong. Set the date and time correctly, then press Check now.";
    case 'cache_invalid':
      return 'The license stored on this computer is damaged, or was copied from another computer. Activate again.';
    default:
      return `Not licensed (${reason ?? 'no reason given'}).`;
  }
}

const SOURCE_WORDS: Record<License['source'], string> = {
  online: 'checked online',
  cache: 'stored on this computer',
  offline: 'offline activation file',
};

// Made on first use: a formatter's locale data takes the browser a while to load, and the
// session is asked for before anything is shown.
let dates: Intl.DateTimeFormat | undefined;
let relatives: Intl.RelativeTimeFormat | undefined;
const dateFormat = { format: (d: Date): string => (dates ??= new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })).format(d) };
const relative = { format: (n: number, unit: Intl.RelativeTimeFormatUnit): string => (relatives ??= new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })).format(n, unit) };

/** "3 minutes ago", "in 29 days": the largest unit that fits. */
function fromNow(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [unit, size] of units) if (abs >= size) return relative.format(Math.round(ms / size), unit);
  return relative.format(0, 'minute');
}

function productName(products: Product[], projectId: string): string {
  return products.find((p) => p.project_id === projectId)?.name ?? `Plugin ${projectId.slice(0, 8)}`;
}

// ------------------------------------------------------------------------------ the page

/** An action's outcome: words that went well, or words and whether they did. */
type Outcome = string | Said;

function useAction(): [busy: string | null, said: Said | null, act: (label: string, fn: () => Promise<Outcome>) => Promise<boolean>, setSaid: (s: Said | null) => void] {
  const [busy, setBusy] = useState<string | null>(null);
  const [said, setSaid] = useState<Said | null>(null);
  const act = async (label: string, fn: () => Promise<Outcome>): Promise<boolean> => {
    setBusy(label);
    setSaid(null);
    try {
      const outcome = await fn();
      setSaid(typeof outcome === 'string' ? { ok: true, text: outcome } : outcome);
      return true;
    } catch (err) {
      setSaid({ ok: false, text: err instanceof Error ? err.message : String(err) });
      return false;
    } finally {
      setBusy(null);
    }
  };
  return [busy, said, act, setSaid];
}

function Message({ said }: { said: Said | null }) {
  if (!said) return null;
  return html`<p class=${`message ${said.ok ? 'ok' : 'bad'}`} role=${said.ok ? 'status' : 'alert'}>${said.text}</p>`;
}

function LicenseCard({ license, snapshot, now }: { license: License; snapshot: Snapshot; now: number }) {
  const [busy, said, act] = useAction();
  const dialog = useRef<HTMLDialogElement>(null);
  const name = productName(snapshot.products, license.project_id);
  const id = `lic-${license.project_id}`;
  const checked = license.checked_at ?? license.validated_at;
  const movable = license.valid;
  const offline = license.source === 'offline';
  // The proof stays here to be saved again (a download cancelled or lost): this computer has
  // forgotten the license, so the card offers no second release.
  const [proof, setProof] = useState<{ document: string; file_name: string } | null>(null);
  const release = async (): Promise<void> => {
    dialog.current?.close();
    await act('Releasing…', async () => {
      if (!offline) {
        await post('/api/deactivate', { project_id: license.project_id });
        return 'Released: a slot of this code is free for another computer.';
      }
      const r = await post<{ document: string; file_name: string }>('/api/offline_release', { project_id: license.project_id });
      setProof(r);
      download(r.file_name, r.document);
      return `Released from this computer. Saved the release proof ${r.file_name} (in your downloads): on a computer that is online, confirm it in this license manager (offline steps, step 4) to free the slot.`;
    });
  };
  return html`<article aria-labelledby=${id}>
    <h3 id=${id}>${name}</h3>
    <p class="muted small mono">${license.project_id}</p>
    <p class=${`state ${license.valid ? 'ok' : 'bad'}`}>${license.valid ? 'Licensed on this computer.' : reasonWords(license.reason)}</p>
    <dl>
      <dt>Code</dt><dd class="mono">${license.code_hint ?? 'none'}</dd>
      ${license.activations !== null && license.max_activations !== null ? html`<dt>Computers</dt><dd>${license.activations} of ${license.max_activations} in use</dd>` : null}
      <dt>Source</dt><dd>${SOURCE_WORDS[license.source]}</dd>
      <dt>Last online check</dt><dd>${checked ? html`<time datetime=${checked} title=${dateFormat.format(new Date(checked))}>${fromNow(checked, now)}</time>` : license.source === 'offline' ? 'never (activated offline)' : 'never'}</dd>
      ${license.valid && license.grace_until
        ? html`<dt>${license.source === 'offline' ? 'Valid until' : 'Works offline until'}</dt><dd><time datetime=${license.grace_until}>${dateFormat.format(new Date(license.grace_until))}</time> (${fromNow(license.grace_until, now)})</dd>`
        : null}
    </dl>
    <div class="row">
      <button type="button" onClick=${() => act('Checking…', async () => {
        const r = await post<{ license: License }>('/api/refresh', { project_id: license.project_id });
        return r.license.valid ? 'Checked: licensed.' : { ok: false, text: `Checked: ${reasonWords(r.license.reason)}` };
      })} disabled=${busy !== null} aria-describedby=${id}>${busy === 'Checking…' ? busy : 'Check now'}</button>
      ${movable ? html`<button type="button" class="danger" onClick=${() => dialog.current?.showModal()} disabled=${busy !== null} aria-describedby=${id}>${busy === 'Releasing…' ? busy : 'Move to another computer…'}</button>` : null}
    </div>
    <${Message} said=${said} />
    ${proof ? html`<div class="row"><button type="button" onClick=${() => download(proof.file_name, proof.document)}>Save the release proof again</button></div>` : null}
    <dialog ref=${dialog} aria-labelledby=${`${id}-confirm`}>
      <h3 id=${`${id}-confirm`}>Move ${name} to another computer?</h3>
      ${offline
        ? html`<p>This computer forgets its offline activation and gives you a release proof file. Confirm that file on a computer that is online: that frees a slot of code ${license.code_hint ?? ''}, so you can activate it on another computer. ${name} stops working here until you activate it again.</p>`
        : html`<p>This releases the license from this computer: a slot of code ${license.code_hint ?? ''} is freed, so you can activate it on another computer. ${name} stops working here until you activate it again.</p>`}
      <div class="row">
        <button type="button" class="danger" onClick=${release}>${offline ? 'Release and download the proof' : "Release this computer's slot"}</button>
        <button type="button" onClick=${() => dialog.current?.close()}>Cancel</button>
      </div>
    </dialog>
  </article>`;
}

/** The plugin a form acts for: a choice among the vendor's, or a project id typed in. */
function ProjectField({ products, idPrefix, value, onInput }: { products: Product[]; idPrefix: string; value: string; onInput: (v: string) => void }) {
  if (products.length === 1) return null;
  if (products.length > 1) {
    return html`<label for=${`${idPrefix}-project`}>Plugin</label>
      <select id=${`${idPrefix}-project`} value=${value} onChange=${(e: Event) => onInput((e.target as HTMLSelectElement).value)}>
        ${products.map((p) => html`<option value=${p.project_id}>${p.name ?? p.project_id}</option>`)}
      </select>`;
  }
  return html`<label for=${`${idPrefix}-project`}>Project id</label>
    <input id=${`${idPrefix}-project`} type="text" value=${value} onInput=${(e: Event) => onInput((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} placeholder="123e4567-e89b-12d3-a456-426614174000" aria-describedby=${`${idPrefix}-project-help`} />
    <p id=${`${idPrefix}-project-help`} class="muted small">The plugin's project id, from your purchase email or the vendor.</p>`;
}

/**
 * The plugins the activation form offers: the vendor's, less those licensed on this computer (a
 * valid license is shown on its card, not offered again; a revoked, expired or released one is).
 */
function offeredProducts(snapshot: Snapshot): Product[] {
  const licensed = new Set(snapshot.licenses.filter((l) => l.valid).map((l) => l.project_id));
  return snapshot.products.filter((p) => !licensed.has(p.project_id));
}

function ActivateForm({ snapshot }: { snapshot: Snapshot }) {
  const offered = offeredProducts(snapshot);
  const named = snapshot.products.length > 0;
  const [typed, setProject] = useState(offered[0]?.project_id ?? '');
  // A plugin chosen, then licensed meanwhile (by the plugin itself, or on another tab), is no
  // longer offered: the form acts for the first one that still is.
  const project = !named || offered.some((p) => p.project_id === typed) ? typed : (offered[0]?.project_id ?? '');
  const [code, setCode] = useState('');
  const [busy, said, act] = useAction();
  const only = offered.length === 1 ? offered[0] : undefined;
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const done = await act('Activating…', async () => {
      const r = await post<{ license: License }>('/api/activate', { project_id: project, code });
      return r.license.valid ? `Activated: ${productName(snapshot.products, r.license.project_id)} is licensed on this computer.` : { ok: false, text: reasonWords(r.license.reason) };
    });
    if (done) setCode('');
  };
  if (named && offered.length === 0) {
    // Every plugin of the vendor is licensed here: nothing to offer; what was just done stays said.
    const names = snapshot.products.map((p) => productName(snapshot.products, p.project_id));
    return html`<section aria-labelledby="activate-h">
      <h2 id="activate-h">Activation</h2>
      <p>${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} licensed on this computer: nothing to activate.</p>
      <${Message} said=${said} />
    </section>`;
  }
  return html`<section aria-labelledby="activate-h">
    <h2 id="activate-h">Activate${only ? ` ${only.name ?? 'the plugin'}` : ' a license'}</h2>
    <form onSubmit=${submit}>
      <${ProjectField} products=${offered} idPrefix="activate" value=${project} onInput=${setProject} />
      <label for="activate-code">Activation code</label>
      <input id="activate-code" type="text" value=${code} onInput=${(e: Event) => setCode((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} placeholder="XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" />
      <div class="row"><button type="submit" class="primary" disabled=${busy !== null}>${busy ?? 'Activate'}</button></div>
    </form>
    <${Message} said=${said} />
  </section>`;
}

/** An offline document given as a file or as its pasted line: the fields, and what they hold. */
function useDocument(id: string, what: string) {
  const [pasted, setPasted] = useState('');
  const file = useRef<HTMLInputElement>(null);
  return {
    /** The pasted line, else the chosen file (refused when far larger than a document). */
    read: (): Promise<string> => (pasted.trim() !== '' ? Promise.resolve(pasted) : readSmallFile(file.current, `offline ${what} file`)),
    /** Empties both, once the document has been used. */
    clear: (): void => {
      setPasted('');
      if (file.current) file.current.value = '';
    },
    fields: html`<label for=${`${id}-file`}>${what.charAt(0).toUpperCase() + what.slice(1)} file</label>
      <input id=${`${id}-file`} type="file" ref=${file} accept=".txt,.json,text/plain,application/json" />
      <label for=${`${id}-text`}>Or paste the ${what} line</label>
      <textarea id=${`${id}-text`} value=${pasted} onInput=${(e: Event) => setPasted((e.target as HTMLTextAreaElement).value)} spellcheck=${false}></textarea>`,
  };
}

function OfflineSection({ snapshot }: { snapshot: Snapshot }) {
  const [project, setProject] = useState(snapshot.products[0]?.project_id ?? '');
  const [code, setCode] = useState('');
  const [answerCode, setAnswerCode] = useState('');
  const [busy, said, act] = useAction();
  const request = useDocument('answer', 'request');
  const response = useDocument('import', 'response');
  const proof = useDocument('confirm', 'release proof');
  const requestFor = async (): Promise<void> => {
    await act('Making the request…', async () => {
      const r = await post<{ document: string; file_name: string }>('/api/offline_request', { project_id: project, code });
      download(r.file_name, r.document);
      return `Saved ${r.file_name} (in your downloads). Carry it to a computer that is online (step 2).`;
    });
  };
  const importResponse = async (): Promise<void> => {
    await act('Importing…', async () => {
      const r = await post<{ license: License }>('/api/offline_import', { document: await response.read() });
      response.clear();
      return r.license.valid
        ? `Imported: ${productName(snapshot.products, r.license.project_id)} is licensed on this computer${r.license.grace_until ? ` until ${dateFormat.format(new Date(r.license.grace_until))}` : ''}.`
        : { ok: false, text: reasonWords(r.license.reason) };
    });
  };
  const answer = async (): Promise<void> => {
    await act('Asking the service…', async () => {
      const r = await post<{ document: string; file_name: string; machine_name: string; code_hint: string; valid_until: string; renew: boolean }>('/api/offline_answer', { document: await request.read(), code: answerCode });
      download(r.file_name, r.document);
      request.clear();
      setAnswerCode('');
      return `Saved ${r.file_name} (in your downloads): ${r.renew ? 'renewed' : 'activated'} code ${r.code_hint} for ${r.machine_name || 'the offline computer'}, valid until ${dateFormat.format(new Date(r.valid_until))}. Carry it back to the offline computer (step 3).`;
    });
  };
  const confirmRelease = async (): Promise<void> => {
    await act('Asking the service…', async () => {
      const r = await post<{ code_hint: string; released: boolean; activations: number | null; max_activations: number | null }>('/api/offline_confirm', { document: await proof.read() });
      proof.clear();
      const slots = r.activations !== null && r.max_activations !== null ? ` (${r.activations} of ${r.max_activations} in use)` : '';
      return r.released
        ? `Released: a slot of code ${r.code_hint} is free${slots}; activate it on the new computer.`
        : `This release proof was confirmed before: the slot of code ${r.code_hint} is already free${slots}.`;
    });
  };
  return html`<section aria-labelledby="offline-h">
    <h2 id="offline-h">Activate a computer that is never online</h2>
    <p>A studio computer without internet is activated by carrying two small files, on a USB stick for example.</p>
    <ol class="steps">
      <li>
        <strong>On the offline computer</strong>, make a request file:
        <${ProjectField} products=${snapshot.products} idPrefix="offline" value=${project} onInput=${setProject} />
        <label for="offline-code">Activation code</label>
        <p id="offline-code-help" class="muted small">Or leave it empty and give it at step 2.</p>
        <input id="offline-code" type="text" aria-describedby="offline-code-help" value=${code} onInput=${(e: Event) => setCode((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} />
        <div class="row"><button type="button" onClick=${requestFor} disabled=${busy !== null}>Download the request file</button></div>
      </li>
      <li>
        <strong>On a computer that is online</strong>, open this license manager and answer the request
        (or run <code>${snapshot.program} offline activate REQUEST-FILE --out response.txt</code>):
        ${request.fields}
        <label for="answer-code">Activation code, when the request has none</label>
        <input id="answer-code" type="text" value=${answerCode} onInput=${(e: Event) => setAnswerCode((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} />
        <div class="row"><button type="button" onClick=${answer} disabled=${busy !== null}>Answer and download the response file</button></div>
      </li>
      <li>
        <strong>Back on the offline computer</strong>, load the response:
        ${response.fields}
        <div class="row"><button type="button" class="primary" onClick=${importResponse} disabled=${busy !== null}>Import the response</button></div>
      </li>
      <li>
        <strong>To move an offline computer's license</strong>: on the offline computer, press "Move to another computer…" on the license above; it gives you a release proof file. On a computer that is online, confirm it here to free the slot:
        ${proof.fields}
        <div class="row"><button type="button" onClick=${confirmRelease} disabled=${busy !== null}>Confirm the release</button></div>
      </li>
    </ol>
    ${busy ? html`<p role="status">${busy}</p>` : null}
    <${Message} said=${said} />
  </section>`;
}

function SupportReport() {
  const [report, setReport] = useState<string | null>(null);
  const [busy, said, act, setSaid] = useAction();
  const make = async (): Promise<void> => {
    await act('Making the report…', async () => {
      const r = await post<{ text: string }>('/api/report');
      setReport(r.text);
      return 'The report is below. Every secret in it is masked.';
    });
  };
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(report ?? '');
      setSaid({ ok: true, text: 'Copied. Paste it into your message to support.' });
    } catch {
      setSaid({ ok: false, text: 'The browser did not allow copying: select the report and copy it yourself.' });
    }
  };
  return html`<section aria-labelledby="report-h">
    <h2 id="report-h">Support report</h2>
    <p>If something does not work, make this report and send it to the vendor's support. It says how this computer's licensing is set up; codes and keys in it are masked.</p>
    <div class="row">
      <button type="button" onClick=${make} disabled=${busy !== null}>${busy ?? (report ? 'Make it again' : 'Make the report')}</button>
      ${report ? html`<button type="button" onClick=${copy}>Copy</button>` : null}
    </div>
    <${Message} said=${said} />
    ${report ? html`<pre class="report" tabindex="0" aria-label="Support report">${report}</pre>` : null}
  </section>`;
}

function AgentDown({ agent }: { agent: Extract<Snapshot['agent'], { running: false }> }) {
  return html`<div class="notice" role="alert">
    <p><strong>The license agent is not running on this computer.</strong> Your plugins ask it whether they are licensed, and this page needs it too.</p>
    <p>Start it by reinstalling the vendor's software, or in a terminal: <code>${agent.start}</code> (or install it as a service, which starts with your computer: <code>${agent.install}</code>).</p>
    <p class="muted small">This page updates by itself once the agent runs.</p>
  </div>`;
}

/** What the live view says: the snapshot, or why there is none. */
interface View {
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
function live(onView: (change: Partial<View>) => void): void {
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

let view: View = { snapshot: null, problem: null };
const viewers = new Set<(v: View) => void>();
live((change) => {
  view = { ...view, ...change };
  for (const v of viewers) v(view);
});

function App() {
  const [{ snapshot, problem }, setView] = useState<View>(view);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    viewers.add(setView);
    setView(view);
    const tick = setInterval(() => setNow(Date.now()), 30_000);
    return () => {
      viewers.delete(setView);
      clearInterval(tick);
    };
  }, []);

  const header = html`<header><h1>License manager</h1>${snapshot ? html`<p class="muted">Licenses of <strong>${snapshot.namespace}</strong> on this computer</p>` : null}</header>`;
  if (problem && !snapshot) return html`<main>${header}<div class="notice" role="alert"><p>${problem}</p></div></main>`;
  if (!snapshot) return html`<main>${header}<p role="status">Connecting to the license manager…</p></main>`;
  const shown = new Set(snapshot.licenses.map((l) => l.project_id));
  const notYet = snapshot.products.filter((p) => !shown.has(p.project_id));
  return html`<main>
    ${header}
    ${problem ? html`<div class="notice" role="alert"><p>${problem}</p></div>` : null}
    ${!snapshot.agent.running ? html`<${AgentDown} agent=${snapshot.agent} />` : null}
    <section class="licenses" aria-labelledby="licenses-h">
      <h2 id="licenses-h">Your licenses</h2>
      ${snapshot.licenses.length === 0 ? html`<p>${snapshot.agent.running ? 'No license is activated on this computer yet.' : 'They are shown here once the license agent runs.'}</p>` : null}
      ${snapshot.licenses.map((l) => html`<${LicenseCard} key=${l.project_id} license=${l} snapshot=${snapshot} now=${now} />`)}
      ${snapshot.agent.running && notYet.length > 0 ? html`<p class="muted">Not activated here yet: ${notYet.map((p) => p.name ?? p.project_id).join(', ')}.</p>` : null}
    </section>
    ${snapshot.agent.running ? html`<${ActivateForm} snapshot=${snapshot} />` : null}
    <${OfflineSection} snapshot=${snapshot} />
    <${SupportReport} />
  </main>`;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
