import { MAX_CODE_LENGTH, MAX_MACHINE_ID_LENGTH } from './rules.js';

/** The largest request body the relay reads; a larger one is 413 `payload_too_large`. */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * A request's body as text, or `undefined` when it is over {@link MAX_BODY_BYTES}: a declared
 * `Content-Length` over the limit is refused before a byte is read; a body without one (chunked)
 * is read until it passes the limit, never further.
 *
 * @example
 * const text = await readLimitedBody(request); // undefined: answer 413
 */
export async function readLimitedBody(request: Request): Promise<string | undefined> {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\d{1,9}$/.test(declared.trim()) || Number(declared) > MAX_BODY_BYTES) return undefined;
    // The HTTP layer holds the body to its declared length: read whole (the platform's fastest way).
    return request.text();
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** An activate, validate or deactivate request to the relay: the service's body plus `project_id`. */
export interface ActivationBody {
  code: string;
  machine_id: string;
  /** Lower-cased. */
  project_id: string;
  /** The service's optional `plugin_id`, when the client sent one (it must name the same project). */
  plugin_id?: string;
}

const KNOWN = ['code', 'machine_id', 'project_id', 'plugin_id'];

/** What is wrong with a body, for a 400 `bad_request` (`field` names it, as the service's errors do). */
export interface BodyProblem {
  field: string;
  message: string;
}

function textField(body: Record<string, unknown>, name: string, max: number, what: string): string | BodyProblem {
  const v = body[name];
  if (v === undefined) return { field: name, message: `${name} is missing: give ${what}` };
  if (typeof v !== 'string' || v.trim() === '') return { field: name, message: `${name} must be a non-empty string: ${what}` };
  if (v.length > max) return { field: name, message: `${name} is ${v.length} characters long (at most ${max})` };
  if (/[\u0000-\u001f\u007f-\u009f]/.test(v)) return { field: name, message: `${name} holds control characters` };
  return v;
}

/**
 * Reads the body of activate, validate and deactivate: a JSON object of `code`, `machine_id`,
 * `project_id` and optionally the service's `plugin_id` (the same project), nothing else. The
 * words never repeat a value (a code is a secret). The one check of what the relay forwards.
 *
 * @example
 * readActivationBody('{"code":"…","machine_id":"m1_…","project_id":"123e…"}'); // { code, machine_id, project_id }
 */
export function readActivationBody(text: string): ActivationBody | BodyProblem {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { field: 'body', message: 'the body is not valid JSON; send {"code", "machine_id", "project_id"} as JSON' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { field: 'body', message: 'the body must be a JSON object of code, machine_id and project_id' };
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!KNOWN.includes(name)) return { field: name.slice(0, 40), message: `${JSON.stringify(name.slice(0, 40))} is not a field of this request (code, machine_id, project_id, plugin_id)` };
  }
  const code = textField(fields, 'code', MAX_CODE_LENGTH, 'the activation code');
  if (typeof code !== 'string') return code;
  const machine = textField(fields, 'machine_id', MAX_MACHINE_ID_LENGTH, "the machine's id");
  if (typeof machine !== 'string') return machine;
  const project = textField(fields, 'project_id', 100, 'the project id the code belongs to');
  if (typeof project !== 'string') return project;
  const projectId = project.toLowerCase();
  if (fields.plugin_id === undefined) return { code, machine_id: machine, project_id: projectId };
  const plugin = textField(fields, 'plugin_id', 100, 'the project id (as project_id)');
  if (typeof plugin !== 'string') return plugin;
  if (plugin.toLowerCase() !== projectId) return { field: 'plugin_id', message: 'plugin_id names another project than project_id; send the same project id in both, or plugin_id not at all' };
  return { code, machine_id: machine, project_id: projectId, plugin_id: plugin };
}

/** The body the service gets: the client's without `project_id`. */
export function serviceBody(b: ActivationBody): string {
  return JSON.stringify(b.plugin_id === undefined ? { code: b.code, machine_id: b.machine_id } : { code: b.code, machine_id: b.machine_id, plugin_id: b.plugin_id });
}
