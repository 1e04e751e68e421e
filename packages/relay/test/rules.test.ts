// The relay repeats a few of the library's input rules on the web platform (its Deno and workerd
// bundles cannot load the library's Node modules). Each verdict is held equal to the library's own
// here, on a table of hostile inputs, so the two cannot drift apart.
import { DEFAULT_POLICY, normalizeBaseUrl, normalizeCode, resolveNamespace } from '@plugin-license/licensing';
import { PROJECT_ID_PATTERN } from '@plugin-license/licensing/executable';
import { describe, expect, it } from 'vitest';
import { baseUrlProblem, MAX_CODE_LENGTH, MAX_TICKET_DAYS, NAMESPACE_PATTERN, PROJECT_ID_PATTERN as RELAY_PROJECT_ID } from '../src/rules.js';

const verdict = (f: () => unknown): string => {
  try {
    return `ok ${String(f())}`;
  } catch {
    return 'refused';
  }
};

describe("the relay's copies of the library's rules give the library's verdicts", () => {
  it.each([
    'https://service.example/functions/v1',
    'https://service.example/functions/v1/',
    'https://service.example/functions/v1//',
    '  https://service.example/functions/v1  ',
    'HTTPS://SERVICE.EXAMPLE/functions/v1',
    'http://127.0.0.1:8787/functions/v1',
    'http://127.255.0.9/functions/v1',
    'http://127.1/functions/v1',
    'http://2130706433/functions/v1',
    'http://0x7f.0.0.1/functions/v1',
    'http://localhost:1/functions/v1',
    'http://a.localhost/functions/v1',
    'http://localhost.example/functions/v1',
    'http://[::1]:8787/functions/v1',
    'http://[0:0:0:0:0:0:0:1]/functions/v1',
    'http://[::ffff:127.0.0.1]/functions/v1',
    'http://128.0.0.1/functions/v1',
    'http://service.example/functions/v1',
    'ftp://service.example/functions/v1',
    'https://u:p@service.example/functions/v1',
    'https://service.example/functions/v1?x=1',
    'https://service.example/functions/v1#f',
    'https://service.example/functions/v2',
    'https://service.example/',
    'https://service.example/x/functions/v1',
    'service.example/functions/v1',
    'https://',
    '',
  ])('base URL %j', (url) => {
    const relay = baseUrlProblem(url);
    const ours = 'url' in relay ? `ok ${relay.url}` : 'refused';
    expect(ours).toBe(verdict(() => normalizeBaseUrl(url)));
  });

  it.each(['acme-audio', 'Acme.Audio_2', 'a', 'a'.repeat(64), 'a'.repeat(65), '-acme', '.acme', '../acme', 'acme audio', 'acme/audio', 'akme\u212a', 'äcme'])('namespace %j', (ns) => {
    expect(NAMESPACE_PATTERN.test(ns) ? 'ok' : 'refused').toBe(verdict(() => resolveNamespace(ns, {})).startsWith('ok') ? 'ok' : 'refused');
  });

  it('the project id pattern is the library\'s', () => {
    expect(RELAY_PROJECT_ID.source).toBe(PROJECT_ID_PATTERN.source);
    expect(RELAY_PROJECT_ID.flags).toBe(PROJECT_ID_PATTERN.flags);
  });

  it("the longest code is the library's", () => {
    expect(verdict(() => normalizeCode('a'.repeat(MAX_CODE_LENGTH)))).not.toBe('refused');
    expect(verdict(() => normalizeCode('a'.repeat(MAX_CODE_LENGTH + 1)))).toBe('refused');
  });

  it("a ticket lives at most the library's offline grace", () => {
    expect(MAX_TICKET_DAYS * 86_400_000).toBe(DEFAULT_POLICY.graceMs);
  });
});
