import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ConfigError,
  NetworkError,
  SchemaError,
  ServiceError,
  TimeoutError,
  WebhookVerificationError,
  assertBaseUrl,
  codeHint,
  isApiError,
  isConfigError,
  isNetworkError,
  isSchemaError,
  isServiceError,
  isTimeoutError,
  isWebhookVerificationError,
  parseRateLimit,
  parseRetryAfterMs,
  MAX_SERVICE_WAIT_MS,
} from '../src/index.js';

describe('error classes', () => {
  const service = new ServiceError({ status: 403, code: 'code_revoked', message: 'revoked', endpoint: 'POST /plugin-activation/activate' });
  const network = new NetworkError('down', 'GET /sdk/status', new Error('ECONNREFUSED'));
  const timeout = new TimeoutError('slow', 'GET /sdk/status', 50);
  const schema = new SchemaError('bad', { endpoint: 'GET /builds/:id', path: 'metadata', issues: [] });
  const config = new ConfigError('bad url', 'baseUrl');
  const webhook = new WebhookVerificationError('stale', 'old');

  it('have literal names, string codes and one base class', () => {
    expect([service, network, timeout, schema, config, webhook].map((e) => [e.name, e.code])).toEqual([
      ['ServiceError', 'code_revoked'],
      ['NetworkError', 'network_error'],
      ['TimeoutError', 'timeout'],
      ['SchemaError', 'schema_mismatch'],
      ['ConfigError', 'invalid_config'],
      ['WebhookVerificationError', 'stale'],
    ]);
    for (const e of [service, network, timeout, schema, config, webhook]) {
      expect(e).toBeInstanceOf(ApiError);
      expect(e).toBeInstanceOf(Error);
    }
    expect(network.cause).toBeInstanceOf(Error);
  });

  it('guards tell the classes apart', () => {
    expect(isServiceError(service)).toBe(true);
    expect(isServiceError(network)).toBe(false);
    expect(isNetworkError(network)).toBe(true);
    expect(isTimeoutError(timeout)).toBe(true);
    expect(isTimeoutError(network)).toBe(false);
    expect(isSchemaError(schema)).toBe(true);
    expect(isConfigError(config)).toBe(true);
    expect(isWebhookVerificationError(webhook)).toBe(true);
    expect(isApiError(new Error('x'))).toBe(false);
    expect(isApiError(null)).toBe(false);
    expect(isApiError('ServiceError')).toBe(false);
  });

  it('guards recognise errors from another realm or another copy of the package (Symbol.for marker)', () => {
    const foreign = runInNewContext(`
      const e = new Error('from elsewhere');
      e.name = 'ServiceError';
      e.code = 'rate_limited';
      e[Symbol.for('plugin-license.api.error')] = true;
      e[Symbol.for('plugin-license.api.error.kind')] = 'ServiceError';
      e`);
    expect(foreign instanceof Error).toBe(false);
    expect(isApiError(foreign)).toBe(true);
    expect(isServiceError(foreign)).toBe(true);
    expect(isNetworkError(foreign)).toBe(false);
  });

  it('guards fall back to the name when the marker is missing', () => {
    const plain = Object.assign(new Error('serialised'), { name: 'TimeoutError', code: 'timeout' });
    expect(isTimeoutError(plain)).toBe(true);
    expect(isApiError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe(false);
  });
});

describe('codeHint', () => {
  it('shows the first and last 4 characters of long codes', () => {
    expect(codeHint('3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601')).toBe('3f2a…b601');
  });
  it('masks short codes entirely', () => {
    expect(codeHint('abcdefgh')).toBe('********');
    expect(codeHint('')).toBe('*');
  });
});

describe('assertBaseUrl', () => {
  it('accepts https anywhere and http on loopback', () => {
    expect(assertBaseUrl('https://service.example/functions/v1/').href).toBe('https://service.example/functions/v1');
    for (const host of ['127.0.0.1:8080', 'localhost', '[::1]:9000', '127.1.2.3']) {
      expect(assertBaseUrl(`http://${host}/functions/v1`).protocol).toBe('http:');
    }
  });
  it.each([
    ['http://service.example/functions/v1', /use https:\/\//],
    ['http://10.0.0.5/functions/v1', /clear text/],
    ['ftp://127.0.0.1/functions/v1', /must use https/],
    ['not a url', /not a valid URL/],
    ['https://user:pw@service.example/functions/v1', /credentials/],
    ['https://service.example/functions/v1?x=1', /query/],
  ])('rejects %s with a ConfigError', (url, message) => {
    let caught: unknown;
    try {
      assertBaseUrl(url);
    } catch (e) {
      caught = e;
    }
    expect(isConfigError(caught)).toBe(true);
    expect((caught as ConfigError).option).toBe('baseUrl');
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain('pw');
  });
});

describe('parseRateLimit', () => {
  const local = Date.parse('2026-01-01T00:00:00.000Z');
  it('reads all three headers, the reset relative to the local clock', () => {
    expect(parseRateLimit({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1767225630' }, local)).toEqual({
      limit: 60,
      remaining: 0,
      resetInMs: 30_000,
      resetAt: new Date(local + 30_000),
    });
  });
  it("measures the reset against the service's Date header, so either clock being off changes nothing", () => {
    // The service's clock runs 40 days ahead: its reset is 30 s after its own Date.
    const serviceNow = local + 40 * 86_400_000;
    const headers = { date: new Date(serviceNow).toUTCString(), 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(serviceNow / 1000 + 30) };
    expect(parseRateLimit(headers, local)?.resetInMs).toBe(30_000);
    // This machine's clock runs 40 days slow: same answer.
    expect(parseRateLimit(headers, local - 40 * 86_400_000)?.resetInMs).toBe(30_000);
  });
  it('caps any wait at one hour and never goes negative', () => {
    const far = { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(local / 1000 + 40 * 86_400) };
    expect(parseRateLimit(far, local)?.resetInMs).toBe(MAX_SERVICE_WAIT_MS);
    expect(MAX_SERVICE_WAIT_MS).toBe(3_600_000);
    const past = { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(local / 1000 - 600) };
    expect(parseRateLimit(past, local)?.resetInMs).toBe(0);
  });
  it('reads Retry-After as seconds or an HTTP date, capped too', () => {
    expect(parseRetryAfterMs(503, { 'retry-after': '120' }, local)).toBe(120_000);
    expect(parseRetryAfterMs(503, { 'retry-after': '99999999' }, local)).toBe(MAX_SERVICE_WAIT_MS);
    const date = new Date(local + 7 * 86_400_000);
    expect(parseRetryAfterMs(503, { date: date.toUTCString(), 'retry-after': new Date(date.getTime() + 90_000).toUTCString() }, local)).toBe(90_000);
    expect(parseRetryAfterMs(503, {}, local)).toBeUndefined();
  });
  it('ignores partial or garbled headers', () => {
    expect(parseRateLimit({ 'x-ratelimit-limit': '60' })).toBeUndefined();
    expect(parseRateLimit({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': 'many', 'x-ratelimit-reset': '1' })).toBeUndefined();
  });
});
