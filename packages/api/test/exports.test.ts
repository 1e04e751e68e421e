// The built package loads as ESM and as CommonJS, from its own name, the way consumers load it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(packageDir, 'dist');

// Built only when missing: `pnpm test` builds first, and rebuilding here (tsup cleans dist) could
// pull the files from under other test files' child processes that load this package's dist.
beforeAll(async () => {
  if (!['index.cjs', 'index.js', 'signed-ticket.cjs', 'signed-ticket.js', 'code-hint.cjs', 'code-hint.js'].every((file) => existsSync(join(dist, file)))) {
    await run('pnpm', ['--filter', '@plugin-license/api', 'build'], { cwd: packageDir });
  }
}, 120_000);

async function node(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd: packageDir });
  return stdout.trim();
}

const probe = `
  const names = Object.keys(m).sort();
  const client = new m.ServiceClient({ baseUrl: 'http://127.0.0.1:1/functions/v1' });
  let configError;
  try { new m.ServiceClient({ baseUrl: 'http://example.invalid/functions/v1' }); } catch (e) { configError = e; }
  console.log(JSON.stringify({
    names,
    hint: m.codeHint('3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601'),
    configError: [configError.name, configError.code, m.isConfigError(configError)],
    parsed: m.ActivateResult.safeParse({ success: true, activations: 1, max_activations: 2, remaining: 1 }).success,
  }));
  client.close();
`;

describe('built package', () => {
  it('ships ESM, CommonJS and both type declarations', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) expect(existsSync(join(dist, file))).toBe(true);
  });

  it('loads with require() and with import, exposing the same names', async () => {
    const cjs = JSON.parse(await node(['-e', `const m = require('@plugin-license/api');${probe}`]));
    const esm = JSON.parse(await node(['--input-type=module', '-e', `import * as m from '@plugin-license/api';${probe}`]));
    expect(esm.names).toEqual(cjs.names);
    for (const name of ['ServiceClient', 'ServiceError', 'NetworkError', 'TimeoutError', 'SchemaError', 'ConfigError', 'isApiError', 'verifyWebhook', 'signWebhook', 'WebhookDeduplicator', 'signTrigger', 'codeHint', 'assertBaseUrl']) {
      expect(cjs.names).toContain(name);
    }
    for (const result of [cjs, esm]) {
      expect(result.hint).toBe('3f2a…b601');
      expect(result.configError).toEqual(['ConfigError', 'invalid_config', true]);
      expect(result.parsed).toBe(true);
    }
  });

  it('guards recognise errors of the other copy when both builds load in one process', async () => {
    const out = await node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       import * as esm from '@plugin-license/api';
       const cjs = createRequire(process.cwd() + '/package.json')('@plugin-license/api');
       const e = new cjs.TimeoutError('slow', 'GET /sdk/status', 5);
       console.log(JSON.stringify([e instanceof esm.TimeoutError, esm.isTimeoutError(e), esm.isApiError(e), esm.isNetworkError(e)]));`,
    ]);
    expect(JSON.parse(out)).toEqual([false, true, true, false]);
  });

  // undici is a hundred modules and about 20 MB: a process that has not asked anything yet (the
  // agent at start) does not load it. Both builds; the first request loads it and works.
  it('never loads undici for a direct connection; through a proxy, on the first request', async () => {
    const script = (load: string): string => `
      const { createServer } = require('node:http');
      ${load}
      const loaded = () => Object.keys(require.cache).some((k) => /[\\/]undici[\\/]/.test(k));
      const server = createServer((_q, r) => { r.setHeader('content-type', 'application/json'); r.end(JSON.stringify({ activations: 0, max_activations: 2, available: 2, is_revoked: false })); });
      server.listen(0, '127.0.0.1', async () => {
        const baseUrl = 'http://127.0.0.1:' + server.address().port + '/functions/v1';
        const client = new m.ServiceClient({ baseUrl, proxy: false });
        const before = loaded();
        const status = await client.activation.status('ABCD-EFGH-IJKL-MNOP');
        const direct = loaded();
        await client.close();
        // A proxy nobody serves: the request fails, but it went the undici way.
        const proxied = new m.ServiceClient({ baseUrl, proxy: 'http://127.0.0.1:9', retry: false });
        const afterProxyClient = loaded();
        const failed = await proxied.activation.status('ABCD-EFGH-IJKL-MNOP').then(() => 'answered', (e) => e.name);
        console.log(JSON.stringify([before, direct, status.available, afterProxyClient, loaded(), failed]));
        await proxied.close(); server.close();
      });`;
    const cjs = JSON.parse(await node(['-e', script(`const m = require('@plugin-license/api');`)]));
    const esm = JSON.parse(
      await node(['--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/package.json'); const m = await import('@plugin-license/api'); ${script('')}`]),
    );
    expect(cjs).toEqual([false, false, 2, false, true, 'NetworkError']);
    expect(esm).toEqual([false, false, 2, false, true, 'NetworkError']);
  });
});

// The signed ticket's format is a subpath of its own, pure web-platform code: the relay bundles it
// for Deno and Cloudflare Workers, where neither undici nor any `node:` module exists.
describe('built package: @plugin-license/api/signed-ticket', () => {
  const probe = `
    const names = Object.keys(m).sort();
    const raw = new Uint8Array(32).fill(7);
    const kid = m.ticketKeyId(raw, (b) => require('node:crypto').createHash('sha256').update(b).digest());
    const text = m.formatSignedTicket({ app: 'acme-audio', project_id: 'ABC', machine_id: 'm1_x', code_hint: 'h', source: 'online', issued_at: 1, valid_until: 2 }, kid, () => new Uint8Array(64));
    console.log(JSON.stringify({ names, parsed: m.parseSignedTicket(text).ok, key: m.parsePublicKeyText('ed25519:' + m.base64UrlEncode(raw)).ok }));
  `;

  it('ships ESM, CommonJS and both type declarations', () => {
    for (const file of ['signed-ticket.js', 'signed-ticket.cjs', 'signed-ticket.d.ts', 'signed-ticket.d.cts']) expect(existsSync(join(dist, file))).toBe(true);
  });

  it('loads with require() and with import, exposing the same names', async () => {
    const cjs = JSON.parse(await node(['-e', `const m = require('@plugin-license/api/signed-ticket');${probe}`]));
    const esm = JSON.parse(await node(['--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/package.json'); import * as m from '@plugin-license/api/signed-ticket';${probe}`]));
    expect(esm).toEqual(cjs);
    expect(cjs.names).toEqual(expect.arrayContaining(['formatSignedTicket', 'parseSignedTicket', 'parsePublicKeyText', 'ticketKeyId', 'signedTicketMessage', 'base64UrlDecode', 'SIGNED_TICKET_CONTEXT', 'MAX_SIGNED_TICKET_BYTES']));
    expect([cjs.parsed, cjs.key]).toEqual([true, true]);
  });

  // esbuild's neutral platform knows no Node built-in: a bundle of the entry (its source and the
  // published file) that needs none of them, nor any other module, is one the Deno and workerd
  // bundles can take as it is.
  it.each([['the source', join(packageDir, 'src', 'signed-ticket-format.ts')], ['the published ESM file', join(dist, 'signed-ticket.js')]])('%s bundles for the neutral platform with no import at all', async (_, entry) => {
    const result = await build({ entryPoints: [entry], bundle: true, platform: 'neutral', format: 'esm', write: false, metafile: true, logLevel: 'silent' });
    expect(Object.keys(result.metafile.inputs)).toHaveLength(1);
    for (const output of Object.values(result.metafile.outputs)) expect(output.imports).toEqual([]);
    expect(result.outputFiles[0]!.text).not.toMatch(/\bnode:|\bBuffer\b|\bprocess\./);
  });
});

// The hint of a code (`code_hint` in a signed ticket, every log line of the relay) is the one
// function of the library, a subpath of its own for the relay's Deno and workerd bundles.
describe('built package: @plugin-license/api/code-hint', () => {
  it('loads with require() and with import, the same function as the main entry', async () => {
    const probe = `console.log(JSON.stringify([m.codeHint('3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601'), m.codeHint === undefined, Object.keys(m).sort()]));`;
    const cjs = JSON.parse(await node(['-e', `const m = require('@plugin-license/api/code-hint');${probe}`]));
    const esm = JSON.parse(await node(['--input-type=module', '-e', `import * as m from '@plugin-license/api/code-hint';${probe}`]));
    expect(esm).toEqual(cjs);
    expect(cjs).toEqual(['3f2a…b601', false, ['codeHint', 'redact', 'redactDeep']]);
  });

  it('bundles for the neutral platform with no import at all', async () => {
    const result = await build({ entryPoints: [join(dist, 'code-hint.js')], bundle: true, platform: 'neutral', format: 'esm', write: false, metafile: true, logLevel: 'silent' });
    expect(Object.keys(result.metafile.inputs)).toHaveLength(1);
    for (const output of Object.values(result.metafile.outputs)) expect(output.imports).toEqual([]);
  });
});
