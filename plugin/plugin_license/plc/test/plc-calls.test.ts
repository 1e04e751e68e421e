// The C client's calls beyond `check` (activate, deactivate, refresh, the offline pair, the
// subscription and its interrupt), driven through plc-check: against the real agent and emulator,
// and against a stand-in that stalls, closes, sends junk or predates the calls.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answerOfflineRequest, parseOfflineDocument } from '@plugin-license/licensing';
import { describe, expect, it } from 'vitest';
import { agentCli, codeHint, generateCode, rpc, startAgent, useAgent, type RunningAgent } from './helpers/agent.js';
import { answer, requestId, SAMPLE_STATE, useFixtureServer } from './helpers/fixture-server.js';
import { plc, run, spawnLines } from './helpers/run.js';
import { hasCc, hasCxx, useBinaries } from './helpers/toolchain.js';

type Answer = Record<string, unknown>;

describe.skipIf(!hasCc)('plc calls against the real agent', () => {
  const bin = useBinaries();
  const real = useAgent();

  it('activate, refresh, deactivate: the state after each, only a hint of the code; a refused code in words', async () => {
    const code = await generateCode(real.emulator);
    const activated = await plc(bin, ['activate', real.agent.socket, real.emulator.projectId, code]);
    expect(activated.answers[0]).toMatchObject({ status: 'ok', valid: true, source: 'online', code_hint: codeHint(code), activations: 1, max_activations: 2 });
    expect(activated.code).toBe(0);
    expect(JSON.stringify(activated.answers)).not.toContain(code);
    expect((await plc(bin, ['refresh', real.agent.socket, real.emulator.projectId])).answers[0]).toMatchObject({ status: 'ok', valid: true, source: 'online' });
    const gone = await plc(bin, ['deactivate', real.agent.socket, real.emulator.projectId]);
    expect(gone.answers[0]).toMatchObject({ status: 'ok', valid: false, reason: 'not_activated', code_hint: null });
    expect(gone.code).toBe(1);

    const unknown = await plc(bin, ['activate', real.agent.socket, real.emulator.projectId, 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE']);
    expect(unknown.answers[0]).toMatchObject({ status: 'agent_error', error_code: -32001, error_detail: 'code_not_found' });
    expect(unknown.answers[0]!.error_message).toMatch(/AAAA…EEEE/);
    expect(JSON.stringify(unknown.answers)).not.toContain('AAAAAAAA-BBBB');
    const empty = await plc(bin, ['activate', real.agent.socket, real.emulator.projectId, '']);
    expect(empty.answers[0]).toMatchObject({ status: 'invalid_argument' });
  });

  it('a subscription delivers every change without polling: an activation made elsewhere, then a revocation', async () => {
    const code = await generateCode(real.emulator);
    const watch = spawnLines(bin.plcCheck, ['watch', real.agent.socket, real.emulator.projectId, '2', '10000']);
    try {
      await watch.waitFor(/"event":"subscribed"/, 'the subscription');
      expect((await rpc(real.agent.socket, 'activate', { project_id: real.emulator.projectId, code })).error).toBeUndefined();
      const on = JSON.parse(await watch.waitFor(/"valid":true/, 'the activation')) as Answer;
      expect(on).toMatchObject({ status: 'ok', source: 'online', code_hint: codeHint(code) });
      // Revoked on the service; the agent finds it at its next check (here asked for at once).
      const revoke = await fetch(`${real.emulator.origin}/__emulator/codes/${code}/revoke`, { method: 'POST' });
      expect(revoke.status).toBeLessThan(300);
      await rpc(real.agent.socket, 'refresh', { project_id: real.emulator.projectId });
      const off = JSON.parse(await watch.waitFor(/"valid":false/, 'the revocation')) as Answer;
      expect(off).toMatchObject({ status: 'ok', reason: 'code_revoked' });
      expect(await watch.exited).toBe(1);
    } finally {
      await watch.stop();
    }
  });

  it('a wait for a change ends when another party signals the interrupt handle, the connection kept', async () => {
    const r = await plc(bin, ['interrupt', real.agent.socket, real.emulator.projectId, '300']);
    expect(r.answers[0]).toMatchObject({ status: 'interrupted', connected: true });
    // Bounded by the interrupt, not by the minute the wait was given.
    expect(r.answers[0]!.elapsed_ms as number).toBeLessThan(30_000);
    expect(r.code).toBe(0);
  });

  it.skipIf(!hasCxx)('plc::Monitor: 50 instances are one connection, follow an activation and a revocation, and keep a revoked license silent when the agent goes away', async () => {
    const socket = real.sockets.path('follow.sock');
    const own = await startAgent({ socket, baseUrl: real.emulator.baseUrl });
    const watch = spawnLines(bin.wrapperExample!, ['follow', socket, real.emulator.projectId, '50', 'keep', '60000']);
    try {
      expect(await watch.waitFor(/^connections=/, 'the connection count')).toBe('connections=1');
      await watch.waitFor(/^state=invalid licensed=false reason=not_activated agree=true$/, 'not activated');
      // The agent counts the clients: the 50 instances are one (the status command asks on a second).
      const status = await run(process.execPath, [agentCli, 'status', '--json'], { PLUGIN_LICENSE_SOCKET: socket, PLUGIN_LICENSE_HOME: own.home });
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true, connections: 1 });

      const code = await generateCode(real.emulator);
      expect((await rpc(socket, 'activate', { project_id: real.emulator.projectId, code })).error).toBeUndefined();
      await watch.waitFor(/^state=valid licensed=true reason=- agree=true$/, 'the activation');
      await fetch(`${real.emulator.origin}/__emulator/codes/${code}/revoke`, { method: 'POST' });
      await rpc(socket, 'refresh', { project_id: real.emulator.projectId });
      await watch.waitFor(/^state=invalid licensed=false reason=code_revoked agree=true$/, 'the revocation');
      // The agent stops: unknown, and a license known to be revoked stays silent (keepPlaying or not).
      await own.stop();
      await watch.waitFor(/^state=unknown licensed=false reason=- agree=true$/, 'unknown after a revocation');
      expect(watch.lines.filter((l) => l.startsWith('state=') && !l.endsWith('agree=true'))).toEqual([]);
    } finally {
      await watch.stop();
      await own.stop();
    }
  });

  it.skipIf(!hasCxx)('the unknown policy: keepPlaying keeps playing; silentAfter(1) goes silent a second into unknown, and plays again when the agent answers', async () => {
    const socket = real.sockets.path('policy.sock');
    const code = await generateCode(real.emulator);
    const own = await startAgent({ socket, baseUrl: real.emulator.baseUrl });
    expect((await rpc(socket, 'activate', { project_id: real.emulator.projectId, code })).error).toBeUndefined();
    const keep = spawnLines(bin.wrapperExample!, ['follow', socket, real.emulator.projectId, '3', 'keep', '60000']);
    const strict = spawnLines(bin.wrapperExample!, ['follow', socket, real.emulator.projectId, '3', '1', '60000']);
    let again: RunningAgent | undefined;
    try {
      for (const p of [keep, strict]) await p.waitFor(/^state=valid licensed=true/, 'valid');
      await own.stop('keep-home');
      await keep.waitFor(/^state=unknown licensed=true/, 'unknown, still playing');
      await strict.waitFor(/^state=unknown licensed=true/, 'unknown, playing for a second');
      await strict.waitFor(/^state=unknown licensed=false/, 'unknown, silent after a second');
      // The agent back on the same home: both play again, as soon as it answers.
      again = await startAgent({ socket, baseUrl: real.emulator.baseUrl, home: own.home });
      await strict.waitFor(/^state=valid licensed=true reason=- agree=true$/, 'valid again');
      // Silent only before its first answer (nothing known yet, if the first block came that early), never after.
      const states = keep.lines.filter((l) => l.startsWith('state='));
      const firstValid = states.indexOf('state=valid licensed=true reason=- agree=true');
      expect(states.slice(0, firstValid).every((l) => l === 'state=unknown licensed=false reason=- agree=true')).toBe(true);
      expect(states.slice(firstValid).filter((l) => l.includes('licensed=false'))).toEqual([]);
    } finally {
      await keep.stop();
      await strict.stop();
      await again?.stop();
      await own.stop();
    }
  });

  it('the offline exchange: a request line, answered elsewhere, imported through the agent; the same response twice is refused', async () => {
    const code = await generateCode(real.emulator);
    const made = await plc(bin, ['offline-request', real.agent.socket, real.emulator.projectId, code]);
    expect(made.answers[0]).toMatchObject({ status: 'ok', file_name: `plugin-license-request-${real.emulator.projectId.slice(0, 8)}.txt` });
    const document = made.answers[0]!.document as string;
    expect(parseOfflineDocument(document, 'offline_request')).toMatchObject({ project_id: real.emulator.projectId, code });

    const response = await answerOfflineRequest(document, { baseUrl: real.emulator.baseUrl, validDays: 30, offlineMaxDays: 365 });
    const file = join(real.sockets.dir, 'response.json');
    writeFileSync(file, JSON.stringify(response, null, 2)); // the file form, with its newlines
    const imported = await plc(bin, ['offline-import', real.agent.socket, file]);
    expect(imported.answers[0]).toMatchObject({ status: 'ok', valid: true, source: 'offline', code_hint: codeHint(code) });
    const again = await plc(bin, ['offline-import', real.agent.socket, file]);
    expect(again.answers[0]).toMatchObject({ status: 'agent_error', error_code: -32602, error_detail: 'offline_refused' });
    expect(again.answers[0]!.error_message).toMatch(/answers no pending request of this machine/);
    await rpc(real.agent.socket, 'deactivate', { project_id: real.emulator.projectId });
  });
});

describe.skipIf(!hasCc)('plc calls against a stand-in agent', () => {
  const bin = useBinaries();
  const { serve, current: fixture, dir } = useFixtureServer();

  it('an agent that predates the offline calls: agent_outdated, in words', async () => {
    const path = await serve((line, s) => {
      const { id, method } = JSON.parse(line) as { id: number; method: string };
      s.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: '${method}'` } }) + '\n');
    });
    const request = await plc(bin, ['offline-request', path, 'p1', '-']);
    expect(request.answers[0]).toMatchObject({ status: 'agent_outdated', error_code: -32601, message: 'the license agent needs an update: it does not know this request' });
    const file = join(dir(), 'doc.txt');
    writeFileSync(file, 'line');
    expect((await plc(bin, ['offline-import', path, file])).answers[0]).toMatchObject({ status: 'agent_outdated' });
    expect(JSON.parse(fixture().received[0]!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'offline_request', params: { project_id: 'p1' } });
  });

  it('every call is bounded: an agent that never answers an activation, or closes in the middle of one', async () => {
    const silent = await serve(() => undefined);
    const stalled = await plc(bin, ['activate', silent, 'p1', 'CODE-1', '300']);
    expect(stalled.answers[0]).toMatchObject({ status: 'timeout' });
    const closing = await serve((_line, s) => {
      s.write('{"jsonrpc":"2.0","id":1,"res');
      s.end();
    });
    expect((await plc(bin, ['deactivate', closing, 'p1', '2000'])).answers[0]).toMatchObject({ status: 'closed' });
    const junk = await serve((_line, s) => s.write('this is not json\n'));
    expect((await plc(bin, ['refresh', junk, 'p1', '2000'])).answers[0]).toMatchObject({ status: 'protocol' });
  });

  it('sends a large document escaped exactly, in pieces, and refuses one over the limit before any I/O', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { ...SAMPLE_STATE, source: 'offline' })));
    const document = `{"type": "offline_response",\n\t"note": "quote \\" backslash \\\\ é 🎵"}\n` + 'x'.repeat(50_000);
    const file = join(dir(), 'big.json');
    writeFileSync(file, document);
    const r = await plc(bin, ['offline-import', path, file]);
    expect(r.answers[0]).toMatchObject({ status: 'ok', source: 'offline' });
    expect(JSON.parse(fixture().received[0]!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'offline_import', params: { document } });

    writeFileSync(file, '"'.repeat(30_001)); // 60,002 bytes once escaped
    expect((await plc(bin, ['offline-import', path, file])).answers[0]).toMatchObject({ status: 'invalid_argument' });
    expect(fixture().received).toHaveLength(1);
  });

  it('an offline request line longer than its buffer is too_large, never cut', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { document: 'A'.repeat(3000), file_name: 'x.txt' })));
    expect((await plc(bin, ['offline-request', path, 'p1', 'CODE-1'])).answers[0]).toMatchObject({ status: 'too_large' });
  });

  it('a subscription: changes split across writes, other notifications and answers skipped, junk ends it', async () => {
    const changed = (state: object): string => JSON.stringify({ jsonrpc: '2.0', method: 'changed', params: state }) + '\n';
    const path = await serve((line, s) => {
      s.write(answer(requestId(line), { subscribed: true }));
      const first = changed({ ...SAMPLE_STATE, valid: false, reason: 'code_revoked' });
      s.write(JSON.stringify({ jsonrpc: '2.0', method: 'hello_there', params: {} }) + '\n');
      s.write(answer(99, SAMPLE_STATE));
      s.write(first.slice(0, 20));
      setTimeout(() => {
        s.write(first.slice(20));
        s.write(changed(SAMPLE_STATE));
        s.write('{"jsonrpc":"2.0","method":"changed","params":{"valid":"maybe"}}\n');
      }, 50);
    });
    const r = await plc(bin, ['watch', path, 'p1', '4', '3000']);
    expect(r.answers.map((a) => [a.event ?? a.status, a.valid, a.reason])).toEqual([
      ['subscribed', undefined, undefined],
      ['ok', false, 'code_revoked'],
      ['ok', true, null],
      ['protocol', undefined, undefined],
    ]);
    expect(JSON.parse(fixture().received[0]!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: { project_id: 'p1' } });
  });

  it('a subscription to every project sends no project id; a quiet agent is a time-out, not an error', async () => {
    const path = await serve((line, s) => s.write(answer(requestId(line), { subscribed: true })));
    const r = await plc(bin, ['watch', path, '-', '1', '100']);
    expect(r.answers).toEqual([{ event: 'subscribed' }, expect.objectContaining({ status: 'timeout' })]);
    expect(JSON.parse(fixture().received[0]!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: {} });
  });
});
