// The C client against a stand-in agent on a real Unix socket: the answers a real agent never
// gives (silence, oversized lines, malformed JSON, stray notifications) and the path rules.
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { answer, requestId, SAMPLE_STATE, useFixtureServer } from './helpers/fixture-server.js';
import { plcCheck, run } from './helpers/run.js';
import { hasCc, useBinaries } from './helpers/toolchain.js';

describe.skipIf(!hasCc)('plc against a fixture server', () => {
  const bin = useBinaries();
  const { serve, current: fixture, dir } = useFixtureServer();
  const socket = (name: string) => `${dir()}/${name}`;

  it('sends one JSON-RPC check line with the project id escaped, and reads the LicenseState', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { ...SAMPLE_STATE, project_id: 'p "q" \\ é' })));
    const { code, answers } = await plcCheck(bin, path, 'p "q" \\ é');
    expect(JSON.parse(fixture().received[0]!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'check', params: { project_id: 'p "q" \\ é' } });
    expect(code).toBe(0);
    expect(answers[0]).toMatchObject({
      status: 'ok',
      valid: true,
      reason: null,
      source: 'online',
      project_id: 'p "q" \\ é',
      code_hint: 'a1b2…7890',
      activations: 1,
      max_activations: 2,
      validated_at: '2026-11-22T10:00:00Z',
      validated_at_s: Date.parse('2026-11-22T10:00:00Z') / 1000,
      grace_until_s: Date.parse('2026-12-22T10:00:00Z') / 1000,
      next_check_at_s: Date.parse('2026-11-23T09:41:07Z') / 1000,
    });
  });

  it('decodes escapes, ignores unknown fields, skips notifications and answers to other ids', async () => {
    const path = await serve((line, s) => {
      const id = requestId(line);
      s.write(JSON.stringify({ jsonrpc: '2.0', method: 'changed', params: { ...SAMPLE_STATE, valid: false, reason: 'code_revoked' } }) + '\n');
      s.write(answer(id + 100, { ...SAMPLE_STATE, code_hint: 'WRONG' }));
      // Hand-written, to control the escapes: \u2026 (…), a surrogate pair (🎵), \" and \/.
      s.write(
        `{"future":{"nested":[1,{"a":[true,null,-1.5e3]}],"s":"x\\"y"},"result":{"valid":false,` +
          `"reason":"not_activated","source":"cache","code_hint":"\\u0061\\u00e9\\u2026\\ud83c\\udfb5\\/\\"",` +
          `"grace_until":"2026-12-22T11:30:00.250+01:30","activations":null,"extra":"ignored"},"id":${id},"jsonrpc":"2.0"}\r\n`,
      );
    });
    const { code, answers } = await plcCheck(bin, path, 'proj_1');
    expect(code).toBe(1);
    expect(answers[0]).toMatchObject({
      status: 'ok',
      valid: false,
      reason: 'not_activated',
      reason_enum: 'not_activated',
      source: 'cache',
      code_hint: 'aé…🎵/"',
      activations: -1,
      max_activations: -1,
      grace_until_s: Date.parse('2026-12-22T10:00:00Z') / 1000,
      validated_at: null,
      validated_at_s: 0,
    });
  });

  it('keeps a reason it does not know as text', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { ...SAMPLE_STATE, valid: false, reason: 'suspended_by_vendor' })));
    const { answers } = await plcCheck(bin, path, 'proj_1');
    expect(answers[0]).toMatchObject({ status: 'ok', valid: false, reason: 'suspended_by_vendor', reason_enum: 'other' });
  });

  it('turns an error object into PLC_ERR_AGENT with its code, message and data.code', async () => {
    const path = await serve((line, s) =>
      s.write(
        JSON.stringify({
          jsonrpc: '2.0',
          id: requestId(line),
          error: { code: -32001, message: 'the service refused: rate limited', data: { status: 429, code: 'rate_limited', message: 'slow down' } },
        }) + '\n',
      ),
    );
    const { code, answers } = await plcCheck(bin, path, 'proj_1');
    expect(code).toBe(2);
    expect(answers[0]).toMatchObject({
      status: 'agent_error',
      error_code: -32001,
      error_message: 'the service refused: rate limited',
      error_detail: 'rate_limited',
    });
  });

  it('takes a parse error with a null id as the answer to its request', async () => {
    const path = await serve((_line, s) => s.write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }) + '\n'));
    const { answers } = await plcCheck(bin, path, 'proj_1');
    expect(answers[0]).toMatchObject({ status: 'agent_error', error_code: -32700, error_message: 'parse error' });
  });

  it.each([
    ['not JSON', 'hello\n'],
    ['truncated JSON', '{"jsonrpc":"2.0","id":1,"result":{"valid":tr\n'],
    ['a result without valid', '{"jsonrpc":"2.0","id":1,"result":{"reason":null}}\n'],
    ['a wrong jsonrpc version', '{"jsonrpc":"1.0","id":1,"result":{"valid":true}}\n'],
    ['trailing bytes', '{"jsonrpc":"2.0","id":1,"result":{"valid":true}} x\n'],
    ['nesting past the depth limit', `{"jsonrpc":"2.0","id":1,"x":${'['.repeat(100)}${']'.repeat(100)},"result":{"valid":true}}\n`],
  ])('refuses %s as a protocol error', async (_name, reply) => {
    const path = await serve((_line, s) => s.write(reply));
    const { code, answers } = await plcCheck(bin, path, 'proj_1');
    expect(code).toBe(2);
    expect(answers[0]).toMatchObject({ status: 'protocol' });
  });

  it('reads an answer that arrives a few bytes at a time', async () => {
    const path = await serve((line, s) => {
      const text = answer(requestId(line), SAMPLE_STATE);
      let i = 0;
      const step = () => {
        if (s.destroyed) return;
        s.write(text.slice(i, i + 7));
        i += 7;
        if (i < text.length) setImmediate(step);
      };
      step();
    });
    const { answers } = await plcCheck(bin, path, 'proj_1');
    expect(answers[0]).toMatchObject({ status: 'ok', valid: true, code_hint: 'a1b2…7890' });
  });

  it('honours the time-out when the agent accepts but never answers', async () => {
    const path = await serve(() => {});
    const { code, answers } = await plcCheck(bin, path, 'proj_1', { timeoutMs: 300 });
    expect(fixture().received).toHaveLength(1);
    expect(code).toBe(2);
    expect(answers[0]).toMatchObject({ status: 'timeout', message: 'the agent did not answer in time' });
  });

  it('refuses an answer line bigger than its buffer, without reading past it', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { ...SAMPLE_STATE, padding: 'x'.repeat(10_000) })));
    const { code, answers } = await plcCheck(bin, path, 'proj_1');
    expect(code).toBe(2);
    expect(answers[0]).toMatchObject({ status: 'too_large' });
  });

  it('accepts a large unknown field that still fits its buffer', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { ...SAMPLE_STATE, padding: 'x'.repeat(3_000) })));
    const { answers } = await plcCheck(bin, path, 'proj_1');
    expect(answers[0]).toMatchObject({ status: 'ok', valid: true });
  });

  it('reports a connection closed before any answer', async () => {
    const path = await serve((_line, s) => s.destroy());
    const { answers } = await plcCheck(bin, path, 'proj_1');
    expect(answers[0]).toMatchObject({ status: 'closed' });
  });

  it('reconnects once when a kept connection was closed by the agent, with no SIGPIPE', async () => {
    const path = await serve((line, s) => s.end(answer(requestId(line), SAMPLE_STATE)));
    const { code, answers } = await plcCheck(bin, path, 'proj_1', { repeat: 3 });
    expect(code).toBe(0);
    expect(answers.map((a) => a.status)).toEqual(['ok', 'ok', 'ok']);
    expect(fixture().connections).toBe(3);
  });

  it('keeps one connection across checks when the agent keeps it open', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), SAMPLE_STATE)));
    const { answers } = await plcCheck(bin, path, 'proj_1', { repeat: 5 });
    expect(answers.map((a) => a.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(fixture().connections).toBe(1);
    expect(fixture().received.map((l) => requestId(l))).toEqual([1, 2, 3, 4, 5]);
  });

  it('reports "not running" without waiting out the time-out when no socket exists, or nothing accepts on the file', async () => {
    // A 60 s time-out: plc-check is killed after 15 s, so only an immediate answer passes.
    const missing = await plcCheck(bin, socket('missing.sock'), 'proj_1', { timeoutMs: 60_000 });
    expect(missing.code).toBe(2);
    expect(missing.answers[0]).toMatchObject({ status: 'not_running' });
    const stale = socket('stale.sock');
    writeFileSync(stale, '');
    expect((await plcCheck(bin, stale, 'proj_1', { timeoutMs: 60_000 })).answers[0]).toMatchObject({ status: 'not_running' });
  });

  it('refuses an empty or over-long project id before any I/O', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), SAMPLE_STATE)));
    expect((await plcCheck(bin, path, '')).answers[0]).toMatchObject({ status: 'invalid_argument' });
    expect((await plcCheck(bin, path, 'p'.repeat(128))).answers[0]).toMatchObject({ status: 'invalid_argument' });
    expect(fixture().received).toHaveLength(0);
  });

  it('resolves "-" to PLUGIN_LICENSE_SOCKET', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), SAMPLE_STATE)));
    const { answers } = await plcCheck(bin, '-', 'proj_1', { env: { PLUGIN_LICENSE_SOCKET: path } });
    expect(answers[0]).toMatchObject({ status: 'ok', valid: true });
  });

  describe('default socket path', () => {
    const base = { PLUGIN_LICENSE_SOCKET: '', PLUGIN_LICENSE_APP: '', XDG_RUNTIME_DIR: '' };
    const path = async (env: Record<string, string>, app?: string) => {
      const r = await run(bin.plcCheck, app === undefined ? ['--default-path'] : ['--default-path', app], { ...base, ...env });
      return { code: r.code, ...(JSON.parse(r.stdout) as { status: string; path?: string }) };
    };

    it('follows the protocol: PLUGIN_LICENSE_SOCKET, then XDG_RUNTIME_DIR/APP, then /tmp/APP-UID', async () => {
      expect(await path({ PLUGIN_LICENSE_SOCKET: '/tmp/x/agent.sock', XDG_RUNTIME_DIR: '/run/user/7' })).toMatchObject({ path: '/tmp/x/agent.sock' });
      expect(await path({ XDG_RUNTIME_DIR: '/run/user/7' })).toMatchObject({ path: '/run/user/7/plugin-license/agent.sock' });
      expect(await path({ XDG_RUNTIME_DIR: '/run/user/7', PLUGIN_LICENSE_APP: 'acme' })).toMatchObject({ path: '/run/user/7/acme/agent.sock' });
      expect(await path({ XDG_RUNTIME_DIR: '/run/user/7', PLUGIN_LICENSE_APP: 'acme' }, 'vendor')).toMatchObject({ path: '/run/user/7/vendor/agent.sock' });
      expect(await path({})).toMatchObject({ path: `/tmp/plugin-license-${process.getuid!()}/agent.sock` });
      // A relative XDG_RUNTIME_DIR is ignored, as the XDG Base Directory specification says (the agent's resolveSocketPath too).
      for (const relative of ['run/user/7', '.', './r', ' /run/user/7']) {
        expect(await path({ XDG_RUNTIME_DIR: relative })).toMatchObject({ path: `/tmp/plugin-license-${process.getuid!()}/agent.sock` });
      }
    });

    it('the app-group form is macOS only: here the group is checked, then ignored (the default path)', async () => {
      const group = async (args: string[], env: Record<string, string> = {}) => {
        const r = await run(bin.plcCheck, ['--app-group-path', ...args], { ...base, XDG_RUNTIME_DIR: '/run/user/7', ...env });
        return { code: r.code, ...(JSON.parse(r.stdout) as { status: string; path?: string }) };
      };
      expect(await group(['ABCDE12345.com.acme.audio', 'acme'])).toMatchObject({ code: 0, path: '/run/user/7/acme/agent.sock' });
      expect(await group(['ABCDE12345.com.acme.audio'], { PLUGIN_LICENSE_APP_GROUP: 'x.y.z' })).toMatchObject({ path: '/run/user/7/plugin-license/agent.sock' });
      for (const bad of ['../x', 'ab', 'a b.c', '.abc']) expect(await group([bad, 'acme'])).toMatchObject({ code: 2, status: 'invalid_argument' });
    });

    it('refuses a path over the sun_path limit instead of cutting it', async () => {
      const fits = `/tmp/${'a'.repeat(102)}`; // 107 bytes: the Linux limit
      expect(await path({ PLUGIN_LICENSE_SOCKET: fits })).toMatchObject({ code: 0, path: fits });
      expect(await path({ PLUGIN_LICENSE_SOCKET: `${fits}b` })).toMatchObject({ code: 2, status: 'path_too_long', message: "the agent's socket path is longer than this platform allows (107 bytes); set a shorter PLUGIN_LICENSE_SOCKET (or XDG_RUNTIME_DIR)" });
      expect(await path({ XDG_RUNTIME_DIR: `/${'r'.repeat(100)}` })).toMatchObject({ code: 2, status: 'path_too_long' });
      const check = await plcCheck(bin, `${fits}b`, 'proj_1');
      expect(check.answers[0]).toMatchObject({ status: 'path_too_long' });
    });
  });
});
