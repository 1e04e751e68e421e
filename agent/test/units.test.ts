import { describe, expect, it } from 'vitest';
import { LicenseError, type LicenseErrorCode, type LicenseErrorOptions } from '@plugin-license/licensing';
import { LineSplitter } from '../src/framing.js';
import { TokenBucket } from '../src/token-bucket.js';
import { ManualScheduler } from '../src/scheduler.js';
import { checkEnvelope } from '../src/protocol.js';
import { fromWireState, stateChanged, toWireState } from '../src/license-state.js';
import { fromRpcError, toRpcError } from '../src/rpc-errors.js';
import { SecretScrubber, hintOf } from '../src/logger.js';
import { AgentError, isAgentError } from '../src/errors.js';

describe('LineSplitter', () => {
  /** Pushes each chunk; returns the lines handed on and whether a push reported overflow. */
  function split(s: LineSplitter, ...chunks: Buffer[]): { lines: string[]; overflow: boolean } {
    const lines: string[] = [];
    let overflow = false;
    for (const chunk of chunks) overflow = s.push(chunk, (line) => lines.push(line)) || overflow;
    return { lines, overflow };
  }

  it('splits lines across chunks and keeps the tail', () => {
    const s = new LineSplitter(16);
    expect(split(s, Buffer.from('ab\ncd')).lines).toEqual(['ab']);
    expect(s.buffered).toBe(2);
    expect(split(s, Buffer.from('ef\n\ngh\n')).lines).toEqual(['cdef', '', 'gh']);
    expect(s.buffered).toBe(0);
  });

  it('decodes UTF-8 whose bytes are split across chunks, and counts the limit in bytes', () => {
    const bytes = Buffer.from('{"client":"Café ☕ 𝄞"}\n');
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = new LineSplitter(bytes.length);
      expect(split(s, bytes.subarray(0, cut), bytes.subarray(cut))).toEqual({ lines: ['{"client":"Café ☕ 𝄞"}'], overflow: false });
    }
    // 'é' is 2 bytes, '☕' 3, '𝄞' 4: the same text is one byte over a limit of its length in bytes - 1.
    expect(split(new LineSplitter(bytes.length - 1), bytes).overflow).toBe(true);
    // Bytes that are not UTF-8 read as U+FFFD, and the lines after them are intact.
    expect(split(new LineSplitter(64), Buffer.from([0x61, 0xe2, 0x82, 0x0a, 0x62, 0x0a])).lines).toEqual(['a\ufffd', 'b']);
  });

  it('accepts a line of exactly the limit (newline included) and refuses one byte more', () => {
    expect(split(new LineSplitter(8), Buffer.from('1234567\n'))).toEqual({ lines: ['1234567'], overflow: false });
    expect(split(new LineSplitter(8), Buffer.from('ok\n12345678\nlost\n'))).toEqual({ lines: ['ok'], overflow: true });
  });

  it('never holds more than the limit of an unfinished line', () => {
    const s = new LineSplitter(8);
    expect(s.push(Buffer.from('1234567'), () => undefined)).toBe(false);
    expect(s.push(Buffer.from('8'), () => undefined)).toBe(true);
    expect(s.buffered).toBe(0);
  });
});

describe('TokenBucket', () => {
  it('starts full, refills with the injected clock and honours a reserve', () => {
    const clock = new ManualScheduler(0);
    const b = new TokenBucket({ capacity: 3, refillPerSecond: 1, now: () => clock.now() });
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
    expect(b.msUntil()).toBe(1000);
    void clock.advance(2000);
    expect(b.take(1)).toBe(true);
    expect(b.take(1)).toBe(false);
    expect(b.take()).toBe(true);
  });
});

describe('ManualScheduler', () => {
  it('runs due timers in order, each at its own time, and skips cancelled ones', async () => {
    const clock = new ManualScheduler(1000);
    const seen: Array<[string, number]> = [];
    clock.setTimer(50, () => seen.push(['b', clock.now()]));
    clock.setTimer(10, () => seen.push(['a', clock.now()]));
    clock.setTimer(30, () => seen.push(['x', clock.now()])).cancel();
    await clock.advance(40);
    expect(seen).toEqual([['a', 1010]]);
    await clock.advance(100);
    expect(seen).toEqual([['a', 1010], ['b', 1050]]);
    expect(clock.now()).toBe(1140);
  });
});

describe('checkEnvelope', () => {
  it('accepts a request and a notification', () => {
    expect(checkEnvelope({ jsonrpc: '2.0', id: 1, method: 'check', params: {} }).ok).toBe(true);
    expect(checkEnvelope({ jsonrpc: '2.0', method: 'check' })).toMatchObject({ ok: true, request: { id: undefined } });
  });
  it.each([
    [[{ jsonrpc: '2.0', id: 1, method: 'hello' }], null],
    [42, null],
    [{ jsonrpc: '1.0', id: 7, method: 'hello' }, 7],
    [{ jsonrpc: '2.0', id: 'x', method: '' }, 'x'],
    [{ jsonrpc: '2.0', id: { a: 1 }, method: 'hello' }, null],
  ])('refuses %j with -32600 and id %j', (value, id) => {
    const r = checkEnvelope(value);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe(-32600);
      expect(r.id).toBe(id);
    }
  });
});

describe('LicenseState mapping', () => {
  const status = {
    projectId: 'p',
    valid: true,
    reason: null,
    source: 'online' as const,
    codeHint: 'abcd…wxyz',
    activations: 1,
    maxActivations: 2,
    validatedAt: new Date('2026-11-22T10:00:00Z'),
    checkedAt: new Date('2026-11-23T10:00:00Z'),
    graceUntil: new Date('2026-12-22T10:00:00Z'),
    nextCheckAt: null,
    signedTicket: null,
  };

  it('maps to snake_case and back', () => {
    const wire = toWireState({ ...status, nextCheckAt: new Date('2026-11-23T09:41:07Z') });
    expect(wire).toEqual({
      project_id: 'p',
      valid: true,
      reason: null,
      source: 'online',
      code_hint: 'abcd…wxyz',
      activations: 1,
      max_activations: 2,
      validated_at: '2026-11-22T10:00:00.000Z',
      checked_at: '2026-11-23T10:00:00.000Z',
      grace_until: '2026-12-22T10:00:00.000Z',
      next_check_at: '2026-11-23T09:41:07.000Z',
    });
    expect(fromWireState(wire)).toEqual({ ...status, nextCheckAt: new Date('2026-11-23T09:41:07Z') });
    // An agent older than checked_at: the last online check is the last success.
    const { checked_at: _c, ...old } = wire;
    expect(fromWireState(old).checkedAt).toEqual(status.validatedAt);
  });

  it('carries the signed ticket exactly, and only when one is stored', () => {
    const signed = '{"v":1}\ned25519:0123456789abcdef:sig\n';
    const wire = toWireState({ ...status, signedTicket: signed });
    expect(wire.signed_ticket).toBe(signed);
    expect(fromWireState(wire).signedTicket).toBe(signed);
    expect('signed_ticket' in toWireState(status)).toBe(false);
    expect(stateChanged(toWireState(status), wire)).toBe(true);
  });

  it('ignores unknown fields and rejects a malformed state', () => {
    const wire = { ...toWireState(status), future_field: 1 };
    expect(fromWireState(wire).projectId).toBe('p');
    expect(() => fromWireState({ valid: 'yes' })).toThrow();
  });

  it('counts only what subscribers act on as a change', () => {
    const a = toWireState(status);
    expect(stateChanged(a, { ...a, next_check_at: 'later', validated_at: 'x', checked_at: 'y' })).toBe(false);
    expect(stateChanged(a, { ...a, valid: false, reason: 'code_revoked' })).toBe(true);
    expect(stateChanged(undefined, a)).toBe(true);
  });
});

describe('errors on the wire', () => {
  const fromService = (code: LicenseErrorCode, serviceCode: string, status: number, extra: Partial<LicenseErrorOptions> = {}) =>
    new LicenseError(code, `service said ${serviceCode}`, { serviceCode, status, ...extra });

  it("maps service refusals to -32001 {code, status, message} with the service's own code", () => {
    expect(toRpcError(fromService('max_activations_reached', 'max_activations_reached', 403))).toMatchObject({ code: -32001, data: { code: 'max_activations_reached', status: 403 } });
    expect(toRpcError(fromService('rate_limited', 'rate_limited', 429, { retryAt: new Date(0) })).data).toMatchObject({ code: 'rate_limited', status: 429, retry_at: '1970-01-01T00:00:00.000Z' });
    // The library calls a 403 forbidden `unauthorized`; the socket says what the service said.
    expect(toRpcError(fromService('unauthorized', 'forbidden', 403)).data).toMatchObject({ code: 'forbidden', status: 403 });
  });
  it('maps an unreachable service to -32002, a refusing disk to -32004, limits to -32003', () => {
    expect(toRpcError(new LicenseError('unavailable', 'down', { retryAt: new Date(0) }))).toMatchObject({ code: -32002, message: 'down', data: { retry_at: '1970-01-01T00:00:00.000Z' } });
    expect(toRpcError(new LicenseError('cache_io', 'read-only', { systemCode: 'EROFS', path: '/x/licenses' }))).toEqual({ code: -32004, message: 'read-only', data: { code: 'EROFS', path: '/x/licenses' } });
    expect(toRpcError(new AgentError('over_limit', 'x', { limit: 'service_budget' }))).toMatchObject({ code: -32003, data: { limit: 'service_budget' } });
  });
  it('a refusal before any request (a code that cannot be one) is -32602', () => {
    expect(toRpcError(new LicenseError('invalid_code', 'the activation code is empty'))).toMatchObject({ code: -32602 });
  });
  it('never passes internal error details on, and scrubs messages', () => {
    expect(toRpcError(new TypeError('secret path /home/x'))).toEqual({ code: -32603, message: 'internal error in the agent; see its log file for details' });
    expect(toRpcError(fromService('code_not_found', 'code_not_found', 404), (s) => s.replace('code_not_found', 'HIDDEN')).message).toBe('service said HIDDEN');
  });
  it('turns wire errors into AgentError on the client side', () => {
    const e = fromRpcError({ code: -32001, message: 'm', data: { code: 'code_revoked', status: 403 } });
    expect(isAgentError(e)).toBe(true);
    expect(e).toMatchObject({ code: 'service_refused', serviceCode: 'code_revoked', status: 403, rpcCode: -32001 });
    expect(fromRpcError({ code: -32003, message: 'm', data: { limit: 'connections' } })).toMatchObject({ code: 'over_limit', limit: 'connections' });
    expect(isAgentError({ name: 'AgentError' })).toBe(true);
    expect(isAgentError(new Error('x'))).toBe(false);
  });
});

describe('secret scrubbing', () => {
  it('replaces registered secrets with hints', () => {
    const s = new SecretScrubber();
    s.add('0123456789abcdef');
    s.add('short');
    expect(s.scrub('code 0123456789abcdef and short')).toBe(`code ${hintOf('0123456789abcdef')} and short`);
    expect(hintOf('0123456789abcdef')).toBe('0123…cdef');
  });
});
