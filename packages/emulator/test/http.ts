import { request } from 'undici';
import type { Emulator } from '../src/index.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
  body: Record<string, unknown>;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (no JSON encoding). */
  raw?: string | Buffer;
  token?: string | null;
  headers?: Record<string, string>;
}

/** One request to the emulator; `path` is relative to the base URL unless it starts with `/__emulator` or `http`. */
export async function call(emu: Pick<Emulator, 'baseUrl' | 'origin' | 'token'>, method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const url = path.startsWith('http') ? path : path.startsWith('/__emulator') ? `${emu.origin}${path}` : `${emu.baseUrl}${path}`;
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? emu.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | Buffer | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  Object.assign(headers, options.headers);
  const res = await request(url, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: res.statusCode,
    headers: res.headers,
    text,
    json,
    body: (json && typeof json === 'object' ? json : {}) as Record<string, unknown>,
  };
}
