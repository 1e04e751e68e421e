import { ErrorBody } from '@plugin-license/api';
import { describe, expect, it } from 'vitest';
import { generateCode } from '@plugin-license/test-utils';
import { BODY_LIMIT_BYTES } from '../src/index.js';
import { call, type Answer } from './http.js';
import { HIGH_LIMITS, useEmulator } from './helpers.js';

const { emu } = useEmulator({ rateLimits: HIGH_LIMITS });
const INTERFACE_CODES = ['bad_request', 'unauthorized', 'forbidden', 'not_found', 'method_not_allowed', 'rate_limited', 'invalid_code', 'code_not_found', 'code_revoked', 'max_activations_reached'];

function expectBadRequest(res: Answer, field: string): void {
  expect(res.status, res.text).toBe(400);
  const body = ErrorBody.parse(res.json);
  expect(body.error).toBe('bad_request');
  expect(body.details).toMatchObject({ field });
  expect(body.message.toLowerCase()).toContain(field.toLowerCase());
}

describe('bodies', () => {
  it('malformed JSON gives 400 bad_request without echoing the body', async () => {
    const secret = '0f8fad5b-d9cb-469f-a165-70867728950e';
    for (const path of ['/plugin-activation/activate', '/builds', '/plugin-activation/generate']) {
      const res = await call(emu, 'POST', path, { raw: `{"code": "${secret}", "machine_id": `, headers: { 'content-type': 'application/json' } });
      expectBadRequest(res, 'body');
      expect(res.text).not.toContain(secret);
    }
  });

  it('wrong types name the field', async () => {
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/activate', { body: { code: 42, machine_id: 'm' }, token: null }), 'code');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/validate', { body: { code: 'x', machine_id: ['m'] }, token: null }), 'machine_id');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/generate', { body: { project_id: emu.projectId, max_activations: '2' } }), 'max_activations');
    expectBadRequest(await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, clean_build: 'yes' } }), 'clean_build');
    expectBadRequest(await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, flags: { enableDebugMode: 1 } } }), 'flags.enableDebugMode');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/activate', { body: ['code'], token: null }), 'body');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/activate', { body: 'code', token: null }), 'body');
  });

  it('missing fields and an empty body name the field', async () => {
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/activate', { body: { code: 'x' }, token: null }), 'machine_id');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/deactivate', { body: { machine_id: 'm' }, token: null }), 'code');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/activate', { token: null }), 'body');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/generate', { body: { max_activations: 1 } }), 'project_id');
    expectBadRequest(await call(emu, 'POST', '/plugin-repos/link', { body: { project_id: emu.projectId, branch: 'main' } }), 'repo_full_name');
    expectBadRequest(await call(emu, 'POST', '/plugin-activation/activate', { body: { code: 'x', machine_id: '' }, token: null }), 'machine_id');
  });

  it('unknown enum values name the field (with the index inside arrays)', async () => {
    expectBadRequest(await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, platforms: ['macos', 'linux'] } }), 'platforms.1');
    expectBadRequest(await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, formats: ['aax'] } }), 'formats.0');
    expectBadRequest(await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, release_type: 'nightly' } }), 'release_type');
    expectBadRequest(await call(emu, 'GET', '/builds?status=exploded'), 'status');
    expectBadRequest(await call(emu, 'GET', '/builds?limit=1000'), 'limit');
    expectBadRequest(await call(emu, 'GET', '/builds?offset=-1'), 'offset');
    expectBadRequest(
      await call(emu, 'POST', '/plugin-repos/create-and-link', { body: { repo_full_name: 'a/b', name: 'n', description: '', visibility: 'secret' } }),
      'visibility',
    );
    expectBadRequest(await call(emu, 'POST', '/__emulator/faults', { body: { mode: 'chaos' } }), 'mode');
    expectBadRequest(await call(emu, 'POST', '/__emulator/clock', { body: { advance_ms: 'soon' } }), 'body');
  });

  it(`a body over ${BODY_LIMIT_BYTES} bytes gives 400 bad_request`, async () => {
    const big = JSON.stringify({ code: 'x', machine_id: 'm', pad: 'x'.repeat(BODY_LIMIT_BYTES) });
    const res = await call(emu, 'POST', '/plugin-activation/activate', { raw: big, token: null, headers: { 'content-type': 'application/json' } });
    expectBadRequest(res, 'body');
    expect(res.body.details).toMatchObject({ limit_bytes: BODY_LIMIT_BYTES });
    // just under the limit is parsed normally
    const fits = JSON.stringify({ code: 'x', machine_id: 'm', pad: 'x'.repeat(BODY_LIMIT_BYTES - 100) });
    expect((await call(emu, 'POST', '/plugin-activation/activate', { raw: fits, token: null })).body.error).toBe('invalid_code');
  });

  it('the activation endpoints and the trigger also read JSON under an empty or malformed Content-Type', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 2);
    const json = JSON.stringify({ code, machine_id: 'sdk-machine' });
    for (const contentType of ['', 'garbage///', 'application/', ';charset=utf-8']) {
      const headers = { 'content-type': contentType };
      const activated = await call(emu, 'POST', '/plugin-activation/activate', { raw: json, token: null, headers });
      expect(activated.status, `activate ${JSON.stringify(contentType)}: ${activated.text}`).toBe(200);
      expect((await call(emu, 'POST', '/plugin-activation/validate', { raw: json, token: null, headers })).body, contentType).toEqual({ valid: true });
      expect((await call(emu, 'POST', '/plugin-activation/deactivate', { raw: json, token: null, headers })).body, contentType).toMatchObject({
        success: true,
        activations: 0,
      });
      const triggered = await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, {
        raw: '{"ref":"refs/heads/main"}',
        token: null,
        headers: { ...headers, 'x-webhook-secret': emu.webhookSecret },
      });
      expect(triggered.status, `trigger ${JSON.stringify(contentType)}: ${triggered.text}`).toBe(201);
    }
    // a wrong method stays 405 whatever the Content-Type
    expect((await call(emu, 'PUT', '/plugin-activation/activate', { raw: json, token: null, headers: { 'content-type': 'garbage///' } })).status).toBe(405);
  });

  it('prototype-poisoning keys are refused as bad_request', async () => {
    const res = await call(emu, 'POST', '/plugin-activation/activate', { raw: '{"code":"x","machine_id":"m","__proto__":{"admin":true}}', token: null });
    expectBadRequest(res, 'body');
  });

  it('endpoints with a bearer token want application/json; the activation endpoints take any content type', async () => {
    const json = JSON.stringify({ project_id: emu.projectId, max_activations: 1 });
    const form = await call(emu, 'POST', '/plugin-activation/generate', { raw: json, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectBadRequest(form, 'content-type');
    const vendor = await call(emu, 'POST', '/plugin-activation/generate', { raw: json, headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' } });
    expect(vendor.status).toBe(201);
    const plain = await call(emu, 'POST', '/plugin-activation/activate', { raw: '{"code":"nope","machine_id":"m"}', token: null, headers: { 'content-type': 'text/plain' } });
    expect(plain.body.error).toBe('invalid_code');
  });
});

describe('paths and methods', () => {
  it('unknown paths give 404 not_found in the error shape', async () => {
    for (const path of ['/nope', '/builds/x/y/z', '/plugin-activation', '/plugin-activation/status']) {
      const res = await call(emu, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(ErrorBody.parse(res.json).error).toBe('not_found');
    }
    const outside = await call(emu, 'GET', `${emu.origin}/`);
    expect(outside.status).toBe(404);
    expect(outside.body.error).toBe('not_found');
    const withBody = await call(emu, 'POST', '/nope', { raw: '{broken', headers: { 'content-type': 'application/json' } });
    expect(withBody.status).toBe(404);
  });

  it('a code typed into a wrong path comes back only as a hint', async () => {
    const code = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    for (const path of [`/plugin-activation/statuz/${code}`, `/nope/${code.toUpperCase()}`, `/nope/x%2F${code}`]) {
      const res = await call(emu, 'GET', path);
      expect(res.status, path).toBe(404);
      const text = JSON.stringify(res.json).toLowerCase();
      expect(text, path).not.toContain(code);
      expect(text, path).toContain('0a1b…3c4d');
    }
  });

  it('a wrong method gives 405 with Allow and the error body, whatever the body', async () => {
    const get = await call(emu, 'GET', '/plugin-activation/activate');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(ErrorBody.parse(get.json)).toMatchObject({ error: 'method_not_allowed', details: { allow: ['POST'] } });
    const del = await call(emu, 'DELETE', '/builds/usage');
    expect(del.status).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
    const post = await call(emu, 'POST', '/github-app-callback/status', { raw: '{broken', headers: { 'content-type': 'application/json' } });
    expect(post.status).toBe(405);
    const put = await call(emu, 'PUT', '/builds/6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b/cancel', { token: null });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('POST');
    expect((await call(emu, 'GET', '/__emulator/reset')).status).toBe(405);
  });

  it('a path with broken percent-encoding or an overlong segment gives 400 bad_request with rate-limit headers, never echoing the path', async () => {
    const code = '0f8fad5b-d9cb-469f-a165-70867728950e';
    for (const path of [`/plugin-activation/status/${code}%zz`, `/plugin-activation/status/${code}%`, `/builds/${code}${'b'.repeat(300)}`]) {
      const res = await call(emu, 'GET', path);
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(ErrorBody.parse(res.json)).toMatchObject({ error: 'bad_request', details: { field: 'url' } });
      expect(res.text).not.toContain(code);
      expect(res.headers['x-ratelimit-limit'], path).toBe('100000');
      expect(res.headers['x-ratelimit-reset'], path).toMatch(/^\d+$/);
    }
    const controlPath = await call(emu, 'POST', `/__emulator/codes/${code}%zz/revoke`);
    expect(controlPath.status).toBe(400);
    expect(ErrorBody.parse(controlPath.json).error).toBe('bad_request');
    expect(controlPath.text).not.toContain(code);
  });

  it('malformed path parameters give 400 bad_request naming them', async () => {
    expectBadRequest(await call(emu, 'GET', '/builds/not-a-uuid'), 'id');
    expectBadRequest(await call(emu, 'GET', '/plugin-activation/project/xyz/keys'), 'projectId');
  });

  it('never answers 500 for a barrage of client mistakes', async () => {
    const shots: Array<[string, string, string | undefined, Record<string, string>]> = [
      ['POST', '/builds', 'null', { 'content-type': 'application/json' }],
      ['POST', '/builds', '[]', { 'content-type': 'application/json' }],
      ['POST', '/builds', '"x"', { 'content-type': 'application/json' }],
      ['POST', '/builds', '1e999', { 'content-type': 'application/json' }],
      ['POST', '/plugin-activation/activate', '{"code":null,"machine_id":null}', {}],
      ['POST', '/plugin-activation/activate', '\u0000\u0001', { 'content-type': 'application/octet-stream' }],
      ['POST', '/plugin-activation/validate', '{"code":"x","machine_id":"' + 'm'.repeat(300) + '"}', {}],
      ['GET', '/builds?limit=abc&offset=xyz', undefined, {}],
      ['GET', '/builds?status=a&status=b', undefined, {}],
      ['GET', '/plugin-activation/status/%E0%A4%A', undefined, {}],
      ['POST', '/external-builds/not-a-uuid/trigger', '{}', {}],
      ['POST', '/__emulator/clock', '{"now":"yesterday"}', { 'content-type': 'application/json' }],
      ['POST', '/__emulator/faults', '{"mode":"latency"}', { 'content-type': 'application/json' }],
      ['POST', '/__emulator/codes/%ZZ/revoke', undefined, {}],
      ['GET', `/plugin-activation/status/${'c'.repeat(500)}`, undefined, {}],
      ['POST', '/builds', '{}', { 'content-type': 'garbage///' }],
    ];
    for (const [method, path, raw, headers] of shots) {
      const res = await call(emu, method, path, { raw, headers });
      expect(res.status, `${method} ${path} ${res.text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path} ${res.text}`).toBeLessThan(500);
      const body = ErrorBody.parse(res.json);
      expect(INTERFACE_CODES, `${method} ${path} ${res.text}`).toContain(body.error);
      expect(body.details, `${method} ${path}`).toBeTypeOf('object');
      if (!path.startsWith('/__emulator')) expect(res.headers['x-ratelimit-limit'], `${method} ${path}`).toBeDefined();
    }
  });
});
