import { ActivateResult, CodeStatus, DeactivateResult, ErrorBody, GeneratedKey, ProjectKeys, ValidateResult } from '@plugin-license/api';
import { describe, expect, it } from 'vitest';
import { generateCode } from '@plugin-license/test-utils';
import { call } from './http.js';
import { HIGH_LIMITS, useEmulator } from './helpers.js';

const { emu } = useEmulator({ rateLimits: HIGH_LIMITS });

const activate = (code: string, machine_id: string, extra: Record<string, unknown> = {}) =>
  call(emu, 'POST', '/plugin-activation/activate', { body: { code, machine_id, ...extra }, token: null });
const deactivate = (code: string, machine_id: string) =>
  call(emu, 'POST', '/plugin-activation/deactivate', { body: { code, machine_id }, token: null });
const validate = (code: string, machine_id: string, extra: Record<string, unknown> = {}) =>
  call(emu, 'POST', '/plugin-activation/validate', { body: { code, machine_id, ...extra }, token: null });

describe('activation slots', () => {
  it('takes one slot per machine, refuses past max_activations, and frees slots on deactivate', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 2);

    const a = await activate(code, 'machine-a');
    expect(a.status).toBe(200);
    expect(ActivateResult.parse(a.json)).toMatchObject({ success: true, activations: 1, max_activations: 2, remaining: 1 });

    const again = await activate(code, 'machine-a');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, activations: 1, remaining: 1, already_activated: true });

    expect((await activate(code, 'machine-b')).body).toMatchObject({ activations: 2, remaining: 0 });

    const full = await activate(code, 'machine-c');
    expect(full.status).toBe(403);
    expect(ErrorBody.parse(full.json)).toMatchObject({ error: 'max_activations_reached', details: { activations: 2, max_activations: 2 } });
    expect(full.text).not.toContain(code);

    // a machine that already holds a slot is still welcome when the code is full
    expect((await activate(code, 'machine-b')).status).toBe(200);

    const off = await deactivate(code, 'machine-a');
    expect(off.status).toBe(200);
    expect(DeactivateResult.parse(off.json)).toMatchObject({ success: true, activations: 1, max_activations: 2 });
    expect((await activate(code, 'machine-c')).body).toMatchObject({ success: true, activations: 2 });

    const status = await call(emu, 'GET', `/plugin-activation/status/${code}`, { token: null });
    expect(CodeStatus.parse(status.json)).toEqual({ activations: 2, max_activations: 2, available: 0, is_revoked: false });
  });

  it('answers deactivate of a machine without a slot with 200 success false and changes nothing', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 1);
    await activate(code, 'holder');
    const res = await deactivate(code, 'stranger');
    expect(res.status).toBe(200);
    expect(DeactivateResult.parse(res.json)).toMatchObject({ success: false, activations: 1, max_activations: 1 });
    expect((await validate(code, 'holder')).body).toEqual({ valid: true });
  });

  it('compares codes case-insensitively', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 1);
    expect((await activate(code.toUpperCase(), 'm')).status).toBe(200);
    expect((await validate(code, 'm')).body).toEqual({ valid: true });
  });
});

describe('activate errors', () => {
  it('400 invalid_code for malformed codes', async () => {
    for (const bad of ['', 'hello', '1234', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', ' 0f8fad5b-d9cb-469f-a165-70867728950e', '{0f8fad5b-d9cb-469f-a165-70867728950e}']) {
      const res = await activate(bad, 'm');
      expect(res.status, bad).toBe(400);
      expect(ErrorBody.parse(res.json).error).toBe('invalid_code');
    }
  });

  it('404 code_not_found for an unknown code and for a plugin_id of another project', async () => {
    const unknown = await activate('0f8fad5b-d9cb-469f-a165-70867728950e', 'm');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('code_not_found');
    expect(unknown.body.message).toContain('0f8f…950e');
    expect(unknown.text).not.toContain('0f8fad5b-d9cb-469f-a165-70867728950e');

    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 2);
    const other = await activate(code, 'm', { plugin_id: emu.otherProjectId });
    expect(other.status).toBe(404);
    expect(other.body.error).toBe('code_not_found');
    expect((await activate(code, 'm', { plugin_id: emu.projectId })).status).toBe(200);
    expect((await validate(code, 'm', { plugin_id: emu.otherProjectId })).body).toEqual({ valid: false, reason: 'code_not_found' });
  });

  it('403 code_revoked once revoked, even for a machine that holds a slot', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 2);
    await activate(code, 'm');
    const revoke = await call(emu, 'POST', `/__emulator/codes/${code}/revoke`, { token: null });
    expect(revoke.status).toBe(200);
    expect(revoke.text).not.toContain(code);
    const res = await activate(code, 'm');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('code_revoked');
    expect((await call(emu, 'GET', `/plugin-activation/status/${code}`, { token: null })).body).toMatchObject({ is_revoked: true });
    expect((await call(emu, 'POST', '/__emulator/codes/0f8fad5b-d9cb-469f-a165-70867728950e/revoke')).status).toBe(404);
  });

  it('deactivate uses the same code errors, and still releases a slot of a revoked code', async () => {
    expect((await deactivate('nope', 'm')).body.error).toBe('invalid_code');
    expect((await deactivate('0f8fad5b-d9cb-469f-a165-70867728950e', 'm')).body.error).toBe('code_not_found');
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 2);
    await activate(code, 'm');
    await call(emu, 'POST', `/__emulator/codes/${code}/revoke`);
    expect((await deactivate(code, 'm')).body).toMatchObject({ success: true, activations: 0 });
  });
});

describe('validate', () => {
  it('reports each reason in a 200 body', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 2);
    const check = async (c: string, m: string) => {
      const res = await validate(c, m);
      expect(res.status).toBe(200);
      return ValidateResult.parse(res.json);
    };
    expect(await check(code, 'never')).toEqual({ valid: false, reason: 'not_activated' });
    await activate(code, 'm');
    expect(await check(code, 'm')).toEqual({ valid: true });
    await deactivate(code, 'm');
    expect(await check(code, 'm')).toEqual({ valid: false, reason: 'deactivated' });
    await activate(code, 'm');
    expect(await check(code, 'm')).toEqual({ valid: true });
    expect(await check('0f8fad5b-d9cb-469f-a165-70867728950e', 'm')).toEqual({ valid: false, reason: 'code_not_found' });
    expect(await check('not-a-code', 'm')).toEqual({ valid: false, reason: 'code_not_found' });
    await call(emu, 'POST', `/__emulator/codes/${code}/revoke`);
    expect(await check(code, 'm')).toEqual({ valid: false, reason: 'code_revoked' });
    expect(await check(code, 'never')).toEqual({ valid: false, reason: 'code_revoked' });
  });
});

describe('status', () => {
  it('needs no token; 400 invalid_code and 404 code_not_found', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 3);
    const ok = await call(emu, 'GET', `/plugin-activation/status/${code}`, { token: null });
    expect(CodeStatus.parse(ok.json)).toEqual({ activations: 0, max_activations: 3, available: 3, is_revoked: false });
    expect((await call(emu, 'GET', '/plugin-activation/status/abc', { token: null })).body.error).toBe('invalid_code');
    const missing = await call(emu, 'GET', '/plugin-activation/status/0f8fad5b-d9cb-469f-a165-70867728950e', { token: null });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('code_not_found');
  });
});

describe('generate and keys', () => {
  it('generates UUID codes and lists them with current activations', async () => {
    const res = await call(emu, 'POST', '/plugin-activation/generate', { body: { project_id: emu.projectId, max_activations: 5, notes: 'press' } });
    expect(res.status).toBe(201);
    const key = GeneratedKey.parse(res.json);
    expect(key).toMatchObject({ key_type: 'project_test', max_activations: 5 });
    expect(key.code).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await activate(key.code, 'm');
    const keys = ProjectKeys.parse((await call(emu, 'GET', `/plugin-activation/project/${emu.projectId}/keys`)).json);
    expect(keys.keys.find((k) => k.code === key.code)).toMatchObject({ current_activations: 1, is_revoked: false, notes: 'press', max_activations: 5 });
  });

  it('401 without or with a bad token, 403 on another owner project, 404 on an unknown project', async () => {
    const body = { project_id: emu.projectId, max_activations: 1 };
    for (const token of [null, 'garbage', `${emu.token}x`]) {
      const res = await call(emu, 'POST', '/plugin-activation/generate', { body, token });
      expect(res.status, String(token)).toBe(401);
      expect(ErrorBody.parse(res.json).error).toBe('unauthorized');
      expect((await call(emu, 'GET', `/plugin-activation/project/${emu.projectId}/keys`, { token })).status).toBe(401);
    }
    const forbidden = await call(emu, 'POST', '/plugin-activation/generate', { body: { ...body, project_id: emu.otherProjectId } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden');
    expect((await call(emu, 'GET', `/plugin-activation/project/${emu.otherProjectId}/keys`)).status).toBe(403);
    const unknown = await call(emu, 'POST', '/plugin-activation/generate', { body: { ...body, project_id: '6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');
  });

  it('matches the Bearer scheme case-insensitively', async () => {
    const lower = await call(emu, 'GET', `/plugin-activation/project/${emu.projectId}/keys`, { token: null, headers: { authorization: `bearer ${emu.token}` } });
    expect(lower.status).toBe(200);
  });
});

describe('content type of the activation endpoints', () => {
  it('parses JSON sent as a form, as text/plain or without a Content-Type', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 3);
    const json = JSON.stringify({ code, machine_id: 'sdk-machine' });
    const variants: Array<Record<string, string>> = [{ 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'text/plain' }, {}];
    for (const headers of variants) {
      const res = await call(emu, 'POST', '/plugin-activation/activate', { raw: json, token: null, headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.body).toMatchObject({ success: true, activations: 1 });
    }
    const v = await call(emu, 'POST', '/plugin-activation/validate', { raw: json, token: null, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(v.body).toEqual({ valid: true });
    const d = await call(emu, 'POST', '/plugin-activation/deactivate', { raw: json, token: null, headers: { 'content-type': 'text/plain' } });
    expect(d.body).toMatchObject({ success: true, activations: 0 });
  });
});
