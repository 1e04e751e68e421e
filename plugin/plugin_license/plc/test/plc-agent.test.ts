// The C client, the example host and the C++ wrapper against the real agent (agent/bin/plugin-license-agent.js)
// backed by the real emulator, over real Unix sockets.
import { answerOfflineRequest, createOfflineRequest, importOfflineResponse } from '@plugin-license/licensing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { codeHint, generateCode, rpc, startAgent, useAgent, type RunningAgent } from './helpers/agent.js';
import { plcCheck, run, spawnLines, WAIT, type LineProcess } from './helpers/run.js';
import { hasCc, hasCxx, useBinaries } from './helpers/toolchain.js';

describe.skipIf(!hasCc)('plc against the real agent', () => {
  const bin = useBinaries();
  const real = useAgent();
  const extra: { stop(): Promise<unknown> }[] = [];
  afterAll(async () => {
    for (const p of extra) await p.stop().catch(() => undefined);
  });

  it('reports a project with nothing stored as not activated', async () => {
    const { code, answers } = await plcCheck(bin, real.agent.socket, real.emulator.projectId);
    expect(answers[0]).toMatchObject({ status: 'ok', valid: false, reason: 'not_activated', reason_enum: 'not_activated', project_id: real.emulator.projectId });
    expect(code).toBe(1);
  });

  it('reports a valid license after an activation through the agent, with only the code hint', async () => {
    const code = await generateCode(real.emulator);
    const activated = await rpc(real.agent.socket, 'activate', { project_id: real.emulator.projectId, code });
    expect(activated.error).toBeUndefined();

    const r = await plcCheck(bin, real.agent.socket, real.emulator.projectId);
    expect(r.code).toBe(0);
    const state = r.answers[0]!;
    expect(state).toMatchObject({ status: 'ok', valid: true, reason: null, source: 'online', code_hint: codeHint(code), project_id: real.emulator.projectId });
    expect(JSON.stringify(r.answers)).not.toContain(code);
    expect(state.validated_at_s).toBe(Math.floor(Date.parse(state.validated_at as string) / 1000));
    expect(state.grace_until_s as number).toBeGreaterThan(state.validated_at_s as number);
  });

  it('answers the same over one kept connection, many times', async () => {
    const { answers } = await plcCheck(bin, real.agent.socket, real.emulator.projectId, { repeat: 50 });
    expect(answers).toHaveLength(50);
    expect(new Set(answers.map((a) => `${a.status}/${a.valid}`))).toEqual(new Set(['ok/true']));
  });

  it('passes on the agent\'s invalid-params error', async () => {
    const { answers } = await plcCheck(bin, real.agent.socket, ' ');
    expect(answers[0]).toMatchObject({ status: 'agent_error', error_code: -32602 });
  });

  it.skipIf(!hasCxx)('gives the C++ wrapper the same answer, through Client and Monitor', async () => {
    const r = await run(bin.wrapperExample!, [real.agent.socket, real.emulator.projectId, '2000']);
    expect(r.stdout).toMatch(/^client state=valid reason=- code_hint=\S+…\S+$/m);
    expect(r.stdout).toMatch(/^monitor state=valid reason=- changes=[01] status=0$/m);
    expect(r.code).toBe(0);
  });

  it('runs the example host: unknown while the agent is down, then invalid, then valid, read by the audio thread', async () => {
    const socket = real.sockets.path('host.sock');
    let host: LineProcess | undefined;
    let second: RunningAgent | undefined;
    try {
      host = spawnLines(bin.hostExample, [socket, real.emulator.projectId, '600000', '20', '2000']);
      extra.push(host);
      await host.waitFor(/^state unknown status=\d+ \(the agent is not running/, 'the unknown state');
      await host.waitFor(/^audio thread plays state=unknown$/, 'the audio thread on unknown');

      second = await startAgent({ socket, baseUrl: real.emulator.baseUrl });
      extra.push(second);
      await host.waitFor(/^state invalid reason=not_activated$/, 'the not-activated state');

      const code = await generateCode(real.emulator);
      expect((await rpc(socket, 'activate', { project_id: real.emulator.projectId, code })).error).toBeUndefined();
      const valid = await host.waitFor(/^state valid /, 'the valid state');
      expect(valid).toContain(`code_hint=${codeHint(code)}`);
      expect(valid).toMatch(/grace_until=\d{4}-\d\d-\d\dT/);
      await host.waitFor(/^audio thread plays state=valid$/, 'the audio thread on valid');

      expect(await host.stop('SIGTERM')).toBe(0);
      const summary = host.lines.find((l) => l.startsWith('done '));
      const counts = Object.fromEntries([...summary!.matchAll(/(\w+)=(\d+)/g)].map((m) => [m[1], Number(m[2])]));
      expect(counts.checks).toBeGreaterThanOrEqual(3);
      expect(counts.licensed_blocks).toBeGreaterThan(0);
      expect(counts.unknown_blocks).toBeGreaterThan(0);
      // One line per change: unknown, invalid, valid, in that order, nothing repeated.
      expect(host.lines.filter((l) => l.startsWith('state ')).map((l) => l.split(' ')[1])).toEqual(['unknown', 'invalid', 'valid']);
    } finally {
      await host?.stop('SIGKILL');
      await second?.stop();
    }
  });

  it('reports "not running" at once when the agent has stopped', async () => {
    const socket = real.sockets.path('gone.sock');
    const shortLived = await startAgent({ socket, baseUrl: real.emulator.baseUrl });
    expect((await plcCheck(bin, socket, real.emulator.projectId)).answers[0]).toMatchObject({ status: 'ok' });
    expect(await shortLived.stop()).toBe(0);
    // A 60 s time-out: plc-check is killed after 15 s, so only an immediate answer passes.
    const { code, answers } = await plcCheck(bin, socket, real.emulator.projectId, { timeoutMs: 60_000 });
    expect(code).toBe(2);
    expect(answers[0]).toMatchObject({ status: 'not_running' });
  });

  it('reports source offline for a license imported offline while the agent runs (the studio never reaches the service)', async () => {
    const studio = await startAgent({ socket: real.sockets.path('studio.sock'), baseUrl: 'http://127.0.0.1:9/functions/v1' });
    try {
      const code = await generateCode(real.emulator);
      const request = await createOfflineRequest({ projectId: real.emulator.projectId, code, home: studio.home });
      const response = await answerOfflineRequest(request, { baseUrl: real.emulator.baseUrl, validDays: 45 });
      await importOfflineResponse(response, { home: studio.home });
      // The running agent reads the imported file within a second.
      const state = await vi.waitFor(async () => {
        const answer = (await plcCheck(bin, studio.socket, real.emulator.projectId)).answers[0]!;
        expect(answer.source).toBe('offline');
        return answer;
      }, WAIT);
      expect(state).toMatchObject({ status: 'ok', valid: true, reason: null, source: 'offline', code_hint: codeHint(code) });
      expect(Date.parse(state.grace_until as string)).toBe(Date.parse(response.valid_until));
    } finally {
      await studio.stop();
    }
  });
});
