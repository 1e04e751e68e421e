import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentClient, isAgentError, type AgentError } from '../src/index.js';
import { shortDir, startTestAgent, UNKNOWN_PROJECT, useTestService } from './helpers.js';
import { rejection } from '@plugin-license/test-utils';

const { service, cleanups } = useTestService();

describe('AgentClient', () => {
  it('not_running when nothing listens', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const err = await rejection(AgentClient.connect({ socketPath: join(d.dir, 'none.sock') }), isAgentError);
    expect(err).toMatchObject({ code: 'not_running', message: expect.stringContaining('plugin-license-agent run') });
    // It names the socket it tried and, when known, the namespace.
    const named = await rejection(AgentClient.connect({ socketPath: join(d.dir, 'none.sock'), namespace: 'acme-audio' }), isAgentError);
    expect(named.message).toBe(`no agent is running at ${join(d.dir, 'none.sock')} (namespace 'acme-audio'); start it with \`plugin-license-agent run --app acme-audio\` (or install it as a service)`);
  });

  it('time-out when the peer never answers', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const path = join(d.dir, 'mute.sock');
    const peers: Socket[] = [];
    const server: Server = createServer((s) => peers.push(s));
    await new Promise<void>((r) => server.listen(path, r));
    cleanups.push(() => {
      peers.forEach((p) => p.destroy());
      return new Promise<void>((r) => server.close(() => r()));
    });
    const client = await AgentClient.connect({ socketPath: path, requestTimeoutMs: 50, reconnect: false });
    cleanups.push(() => client.close());
    expect(await rejection(client.hello(), isAgentError)).toMatchObject({ code: 'timeout' });
  });

  it('pipelines requests and matches answers by id', async () => {
    const t = await startTestAgent(service);
    cleanups.push(() => t.cleanup());
    const client = await AgentClient.connect({ socketPath: t.socketPath });
    cleanups.push(() => client.close());
    const answers = await Promise.all([client.hello(), client.check(UNKNOWN_PROJECT), client.list(), client.check('bad').catch((e: unknown) => e), client.hello()]);
    expect(answers[0]).toMatchObject({ protocol: 1 });
    expect(answers[1]).toMatchObject({ projectId: UNKNOWN_PROJECT });
    expect(Array.isArray(answers[2])).toBe(true);
    expect(answers[3]).toMatchObject({ code: 'invalid_params' });
    expect(answers[4]).toMatchObject({ namespace: 'agent-test' });
  });

  it('reconnects with back-off after the agent restarts, and subscribes again', async () => {
    const first = await startTestAgent(service);
    const client = await AgentClient.connect({ socketPath: first.socketPath, reconnect: { minDelayMs: 20, maxDelayMs: 200, maxAttempts: 20 } });
    cleanups.push(() => client.close());
    const sub = await client.subscribe(service.emulator.projectId);
    const disconnected = new Promise((r) => client.once('disconnected', r));
    await first.agent.close();
    await disconnected;
    const second = await startTestAgent(service, {}, { home: first.home, socketPath: first.socketPath });
    cleanups.push(() => second.cleanup().then(() => first.cleanup()));
    await new Promise<void>((r) => client.once('reconnected', () => r()));
    expect(second.agent.stats().subscribers).toBe(1);
    const changed = new Promise((r) => sub.once('changed', r));
    const code = await service.code(2);
    const other = await AgentClient.connect({ socketPath: second.socketPath, reconnect: false });
    await other.activate(service.emulator.projectId, code);
    expect(await changed).toMatchObject({ valid: true, projectId: service.emulator.projectId });
    await other.deactivate(service.emulator.projectId);
    other.close();
  });

  it('gives up after a bounded number of attempts', async () => {
    const t = await startTestAgent(service);
    const client = await AgentClient.connect({ socketPath: t.socketPath, reconnect: { minDelayMs: 5, maxDelayMs: 10, maxAttempts: 3 } });
    cleanups.push(() => client.close());
    const sub = await client.subscribe();
    const ended = new Promise<void>((r) => sub.once('end', () => r()));
    const closed = new Promise<AgentError | undefined>((r) => client.once('closed', r));
    await t.cleanup();
    expect(await closed).toMatchObject({ code: 'not_running', message: expect.stringContaining('after 3 attempts') });
    await ended;
    expect(sub.closed).toBe(true);
  });

  it('close() rejects pending requests and later ones', async () => {
    const t = await startTestAgent(service);
    cleanups.push(() => t.cleanup());
    const client = await AgentClient.connect({ socketPath: t.socketPath });
    client.close();
    expect(await rejection(client.hello(), isAgentError)).toMatchObject({ code: 'closed' });
  });

  it('subscribe delivers a change that arrives in the same read as its answer', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const path = join(d.dir, 'fixture.sock');
    const peers: Socket[] = [];
    const state = { project_id: UNKNOWN_PROJECT, valid: true, reason: null, source: 'online', code_hint: 'a1b2…7890', activations: 1, max_activations: 2, validated_at: null, grace_until: null, next_check_at: null };
    const server: Server = createServer((s) => {
      peers.push(s);
      s.on('data', (chunk) => {
        const { id } = JSON.parse(chunk.toString('utf8')) as { id: number };
        // One write: the answer and the first notification reach the client together.
        s.write(`${JSON.stringify({ jsonrpc: '2.0', id, result: { subscribed: true } })}\n${JSON.stringify({ jsonrpc: '2.0', method: 'changed', params: state })}\n`);
      });
    });
    await new Promise<void>((r) => server.listen(path, r));
    cleanups.push(() => {
      peers.forEach((p) => p.destroy());
      return new Promise<void>((r) => server.close(() => r()));
    });
    const client = await AgentClient.connect({ socketPath: path, reconnect: false });
    cleanups.push(() => client.close());
    const sub = await client.subscribe(UNKNOWN_PROJECT);
    const first = await sub[Symbol.asyncIterator]().next();
    expect(first).toMatchObject({ done: false, value: { projectId: UNKNOWN_PROJECT, valid: true } });
  });

  it('a refused subscribe leaves no subscription behind', async () => {
    const t = await startTestAgent(service);
    cleanups.push(() => t.cleanup());
    const client = await AgentClient.connect({ socketPath: t.socketPath });
    cleanups.push(() => client.close());
    expect(await rejection(client.subscribe('not-a-uuid'), isAgentError)).toMatchObject({ code: 'invalid_params' });
    expect(t.agent.stats().subscribers).toBe(0);
  });

  it('a refused subscribe is not renewed after a reconnect', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const path = join(d.dir, 'fixture.sock');
    const peers: Socket[] = [];
    let subscribes = 0;
    let renewed: (why: string) => void = () => undefined;
    const subscribedAgain = new Promise<string>((r) => (renewed = r));
    const server: Server = createServer((s) => {
      peers.push(s);
      s.on('data', (chunk) => {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          const { id, method } = JSON.parse(line) as { id: number; method: string };
          if (method === 'subscribe' && ++subscribes > 1) renewed('a subscribe was sent again');
          s.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: 'project_id is not a UUID' } })}\n`);
        }
      });
    });
    await new Promise<void>((r) => server.listen(path, r));
    cleanups.push(() => {
      peers.forEach((p) => p.destroy());
      return new Promise<void>((r) => server.close(() => r()));
    });
    const client = await AgentClient.connect({ socketPath: path, reconnect: { minDelayMs: 5, maxDelayMs: 20, maxAttempts: 5 } });
    cleanups.push(() => client.close());
    expect(await rejection(client.subscribe('not-a-uuid'), isAgentError)).toMatchObject({ code: 'invalid_params' });
    // The agent drops the connection and answers again at once.
    const reconnected = new Promise<string>((r) => client.once('reconnected', () => r('reconnected')));
    peers.forEach((p) => p.destroy());
    expect(await Promise.race([reconnected, subscribedAgain])).toBe('reconnected');
  });
});
