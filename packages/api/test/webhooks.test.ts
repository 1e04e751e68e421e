import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  WebhookDeduplicator,
  isConfigError,
  isWebhookVerificationError,
  signTrigger,
  signWebhook,
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookPayload,
} from '../src/index.js';

const secret = 'whsec_test_0123456789abcdef';
const now = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const nowSeconds = now / 1000;

const detailed = {
  event: 'build.success',
  timestamp: '2026-01-01T00:00:00Z',
  build: {
    id: 'b7a1c2d3-0000-4000-8000-000000000001',
    project_id: 'p0000000-0000-4000-8000-000000000001',
    version: '1.2.3',
    build_number: 7,
    status: 'success',
    platforms: ['macos'],
    formats: ['vst3'],
    duration_seconds: 312,
    artifacts: [{ platform: 'macos', format: 'vst3', file_name: 'Reverb.vst3.zip', file_size: 1024, download_url: 'https://files.example/x' }],
    queue_position: 0,
  },
};
const failed = {
  event: 'build.failed',
  timestamp: '2026-01-01T00:00:00Z',
  build: { id: 'b7a1c2d3-0000-4000-8000-000000000002', status: 'failed', error_message: 'compile error', error_logs: '...', failed_at_step: 'compile' },
};
const flat = {
  event: 'build.status',
  build_id: 'b7a1c2d3-0000-4000-8000-000000000001',
  status: 'success',
  project_id: 'p0000000-0000-4000-8000-000000000001',
  version: '1.2.3',
  timestamp: '2026-01-01T00:00:00Z',
};

function reasonOf(options: VerifyWebhookOptions): string {
  try {
    verifyWebhook(options);
  } catch (e) {
    if (isWebhookVerificationError(e)) {
      expect(e.message).not.toContain(secret);
      return e.code;
    }
    throw e;
  }
  return 'accepted';
}

describe('signWebhook', () => {
  it('signs timestamp + "." + body with HMAC-SHA256 in lowercase hex', () => {
    const body = JSON.stringify(detailed);
    const headers = signWebhook(body, secret, { timestamp: nowSeconds });
    const expected = createHmac('sha256', secret).update(`${nowSeconds}.${body}`).digest('hex');
    expect(headers).toEqual({ 'x-service-signature': `sha256=${expected}`, 'x-service-timestamp': String(nowSeconds) });
  });

  it('signs the body alone and omits the timestamp in bodyOnly mode', () => {
    const body = JSON.stringify(flat);
    const headers = signWebhook(body, secret, { bodyOnly: true });
    expect(headers).toEqual({ 'x-service-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` });
  });

  it('takes the time from now() by default', () => {
    expect(signWebhook('{}', secret, { now: () => now + 999 })['x-service-timestamp']).toBe(String(nowSeconds));
  });
});

describe('verifyWebhook', () => {
  const body = JSON.stringify(detailed);
  const signed = (b: string, opts = {}) => ({ body: b, headers: signWebhook(b, secret, { timestamp: nowSeconds, ...opts }), secret, now: () => now });

  it('accepts a good detailed delivery and keeps unknown fields', () => {
    const result = verifyWebhook(signed(body));
    expect(result.form).toBe('detailed');
    expect(result.signedOver).toBe('timestamp_and_body');
    expect(result.timestamp).toBe(nowSeconds);
    expect(result.payload.event).toBe('build.success');
    if (result.payload.event === 'build.success') {
      expect(result.payload.build.artifacts?.[0]?.file_name).toBe('Reverb.vst3.zip');
      expect(result.payload.build.queue_position).toBe(0);
    }
  });

  it('accepts the failed form and a Buffer body with Node-style and fetch-style headers', () => {
    const raw = Buffer.from(JSON.stringify(failed));
    const headers = signWebhook(raw, secret, { timestamp: nowSeconds });
    const nodeStyle = { 'x-service-signature': headers['x-service-signature'], 'x-service-timestamp': [headers['x-service-timestamp'] as string] };
    const r1 = verifyWebhook({ body: raw, headers: nodeStyle, secret, now: () => now });
    expect(r1.payload.event === 'build.failed' && r1.payload.build.failed_at_step).toBe('compile');
    const fetchStyle = new Headers({ 'X-Service-Signature': headers['x-service-signature'], 'X-Service-Timestamp': String(nowSeconds) });
    expect(verifyWebhook({ body: raw, headers: fetchStyle, secret, now: () => now }).form).toBe('detailed');
  });

  it('accepts the flat form signed with a timestamp, without any opt-in', () => {
    const result = verifyWebhook(signed(JSON.stringify(flat)));
    expect(result.form).toBe('flat');
    expect(result.payload.event === 'build.status' && result.payload.build_id).toBe(flat.build_id);
  });

  it('accepts any of several secrets during a rotation', () => {
    expect(verifyWebhook({ ...signed(body), secret: ['old-secret-value', secret] }).form).toBe('detailed');
  });

  it('rejects a tampered body', () => {
    const good = signed(body);
    expect(reasonOf({ ...good, body: body.replace('1.2.3', '9.9.9') })).toBe('bad_signature');
  });

  it('rejects a wrong secret', () => {
    expect(reasonOf({ ...signed(body), secret: 'another-secret-entirely' })).toBe('bad_signature');
  });

  it('rejects a tampered timestamp', () => {
    const good = signed(body);
    expect(reasonOf({ ...good, headers: { ...good.headers, 'x-service-timestamp': String(nowSeconds - 1) } })).toBe('bad_signature');
  });

  it('rejects stale and future timestamps beyond the tolerance, both directions', () => {
    expect(reasonOf(signed(body, { timestamp: nowSeconds - 301 }))).toBe('stale');
    expect(reasonOf(signed(body, { timestamp: nowSeconds + 301 }))).toBe('future');
    expect(reasonOf(signed(body, { timestamp: nowSeconds - 300 }))).toBe('accepted');
    expect(reasonOf(signed(body, { timestamp: nowSeconds + 300 }))).toBe('accepted');
    expect(reasonOf({ ...signed(body, { timestamp: nowSeconds - 30 }), toleranceSeconds: 10 })).toBe('stale');
  });

  it('rejects missing headers', () => {
    const good = signed(body);
    expect(reasonOf({ ...good, headers: { 'x-service-timestamp': String(nowSeconds) } })).toBe('missing_header');
    expect(reasonOf({ ...good, headers: { 'x-service-signature': good.headers['x-service-signature'] } })).toBe('missing_header');
    expect(reasonOf({ ...good, headers: {} })).toBe('missing_header');
  });

  it('rejects malformed signature and timestamp headers', () => {
    const good = signed(body);
    expect(reasonOf({ ...good, headers: { ...good.headers, 'x-service-signature': 'sha1=abc' } })).toBe('bad_signature');
    expect(reasonOf({ ...good, headers: { ...good.headers, 'x-service-timestamp': '2026-01-01T00:00:00Z' } })).toBe('bad_timestamp');
  });

  it('rejects a correctly signed body that is not a documented payload', () => {
    expect(reasonOf(signed('not json'))).toBe('bad_payload');
    expect(reasonOf(signed(JSON.stringify({ event: 'build.exploded', build: {} })))).toBe('bad_payload');
    expect(reasonOf(signed(JSON.stringify({ ...detailed, build: { id: 'x' } })))).toBe('bad_payload');
  });

  describe('flat form signed over the body alone', () => {
    const flatBody = JSON.stringify(flat);
    const bodyOnly = { body: flatBody, headers: signWebhook(flatBody, secret, { bodyOnly: true }), secret, now: () => now };

    it('is refused without the opt-in', () => {
      expect(reasonOf(bodyOnly)).toBe('missing_header');
      const withTimestamp = { ...bodyOnly, headers: { ...bodyOnly.headers, 'x-service-timestamp': String(nowSeconds) } };
      expect(reasonOf(withTimestamp)).toBe('bad_signature');
    });

    it('is accepted with allowBodyOnlySignature, checking freshness from the payload timestamp', () => {
      const result = verifyWebhook({ ...bodyOnly, allowBodyOnlySignature: true });
      expect(result).toMatchObject({ form: 'flat', signedOver: 'body', timestamp: nowSeconds });
      expect(reasonOf({ ...bodyOnly, allowBodyOnlySignature: true, now: () => now + 3_600_000 })).toBe('stale');
    });

    it('still uses the timestamp header for freshness when one is sent', () => {
      const headers = { ...bodyOnly.headers, 'x-service-timestamp': String(nowSeconds - 1000) };
      expect(reasonOf({ ...bodyOnly, headers, allowBodyOnlySignature: true })).toBe('stale');
    });

    it('is accepted only for the flat form, never for a detailed payload', () => {
      const headers = signWebhook(body, secret, { bodyOnly: true });
      expect(reasonOf({ body, headers, secret, now: () => now, allowBodyOnlySignature: true })).toBe('bad_signature');
    });

    it('does not make a tampered flat body pass', () => {
      expect(reasonOf({ ...bodyOnly, body: flatBody.replace('success', 'failed'), allowBodyOnlySignature: true })).toBe('missing_header');
    });
  });

  it('reports a missing secret or parsed body as a ConfigError, not a verification failure', () => {
    for (const bad of [{ ...signed(body), secret: '' }, { ...signed(body), body: detailed as unknown as string }]) {
      let caught: unknown;
      try {
        verifyWebhook(bad);
      } catch (e) {
        caught = e;
      }
      expect(isConfigError(caught)).toBe(true);
    }
  });
});

describe('WebhookDeduplicator', () => {
  const detailedPayload = detailed as unknown as WebhookPayload;
  const next = (event: string, status: string) =>
    ({ ...detailed, event, build: { ...detailed.build, status } }) as unknown as WebhookPayload;

  it('drops a repeated delivery of the same event but keeps a build’s later events', () => {
    const dedupe = new WebhookDeduplicator();
    expect(dedupe.isDuplicate(next('build.queued', 'queued'))).toBe(false);
    expect(dedupe.isDuplicate(next('build.started', 'running'))).toBe(false);
    expect(dedupe.isDuplicate(detailedPayload)).toBe(false);
    expect(dedupe.isDuplicate(structuredClone(detailedPayload))).toBe(true);
    expect(dedupe.isDuplicate({ ...flat } as WebhookPayload)).toBe(false);
    expect(dedupe.isDuplicate({ ...flat, timestamp: '2026-01-01T00:00:05Z' } as WebhookPayload)).toBe(true);
    expect(dedupe.isDuplicate({ ...flat, status: 'failed' } as WebhookPayload)).toBe(false);
    expect(dedupe.size).toBe(5);
  });

  it('keys on event, build id and status', () => {
    expect(WebhookDeduplicator.keyOf(detailedPayload)).toBe(`build.success|${detailed.build.id}|success`);
    expect(WebhookDeduplicator.keyOf(flat as WebhookPayload)).toBe(`build.status|${flat.build_id}|success`);
  });

  it('is bounded by maxEntries, forgetting the oldest first', () => {
    const dedupe = new WebhookDeduplicator({ maxEntries: 2 });
    const a = { ...flat, build_id: 'a' } as WebhookPayload;
    const b = { ...flat, build_id: 'b' } as WebhookPayload;
    const c = { ...flat, build_id: 'c' } as WebhookPayload;
    dedupe.isDuplicate(a);
    dedupe.isDuplicate(b);
    dedupe.isDuplicate(c);
    expect(dedupe.size).toBe(2);
    expect(dedupe.isDuplicate(c)).toBe(true);
    expect(dedupe.isDuplicate(a)).toBe(false);
  });

  it('forgets keys after ttlMs on the injected clock', () => {
    let t = 0;
    const dedupe = new WebhookDeduplicator({ ttlMs: 1000, now: () => t });
    dedupe.isDuplicate(detailedPayload);
    t = 999;
    expect(dedupe.isDuplicate(detailedPayload)).toBe(true);
    t = 1000;
    expect(dedupe.isDuplicate(detailedPayload)).toBe(false);
  });

  it('forget() lets a failed delivery be handled on retry', () => {
    const dedupe = new WebhookDeduplicator();
    dedupe.isDuplicate(detailedPayload);
    dedupe.forget(detailedPayload);
    expect(dedupe.isDuplicate(detailedPayload)).toBe(false);
  });
});

describe('signTrigger', () => {
  it('is sha256= + hex HMAC of the raw body bytes exactly', () => {
    const raw = '{"ref":"refs/heads/main"}';
    expect(signTrigger(raw, secret)).toBe(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
    expect(signTrigger(Buffer.from(raw), secret)).toBe(signTrigger(raw, secret));
    expect(signTrigger('{"ref": "refs/heads/main"}', secret)).not.toBe(signTrigger(raw, secret));
  });
});
