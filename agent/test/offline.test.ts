// offline_request and offline_import (added to protocol 1 for plugins: docs/plugin-integration.md),
// through AgentClient and a raw socket, against the real agent and the emulator; and what a client
// says to an agent that predates them.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answerOfflineRequest, offlineText, parseOfflineDocument } from '@plugin-license/licensing';
import { rejection } from '@plugin-license/test-utils';
import { AgentClient, isAgentError, type LicenseState } from '../src/index.js';
import { RawClient, shortDir, startTestAgent, useTestService } from './helpers.js';

const { service, cleanups } = useTestService();

afterEach(async () => {
  await service.control.faults({ mode: 'none' });
});

async function agentAndClient(namespace?: string): Promise<{ home: string; socketPath: string; client: AgentClient; close: () => Promise<void> }> {
  const t = await startTestAgent(service, namespace === undefined ? {} : { namespace });
  cleanups.push(() => t.cleanup());
  const client = await AgentClient.connect({ socketPath: t.socketPath, connectTimeoutMs: 2000 });
  cleanups.push(() => client.close());
  return { home: t.home, socketPath: t.socketPath, client, close: () => t.agent.close() };
}

/** Step 2, as `plugin-license offline activate` does it on a computer that is online. */
async function answer(document: string, validDays = 30): Promise<string> {
  const response = await answerOfflineRequest(document, { baseUrl: service.emulator.baseUrl, validDays, offlineMaxDays: 365 });
  return offlineText(response);
}

describe('the offline exchange through the agent', () => {
  it('request, answer elsewhere, import: valid from an offline source, pushed to subscribers, nothing of the code in the logs', async () => {
    const { home, client, close } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    const sub = await client.subscribe(projectId);
    const changes: LicenseState[] = [];
    sub.on('changed', (s) => changes.push(s));

    const made = await client.offlineRequest(projectId.toUpperCase(), code);
    expect(made.file_name).toBe(`agent-test-request-${projectId.slice(0, 8)}.txt`);
    const request = parseOfflineDocument(made.document, 'offline_request');
    expect(request).toMatchObject({ project_id: projectId, code, renew: false });
    // The request is not an activation: nothing changed yet.
    expect(await client.check(projectId)).toMatchObject({ valid: false, reason: 'not_activated' });

    const response = await answer(made.document);
    const imported = await client.offlineImport(`\n  ${response}\n`);
    expect(imported).toMatchObject({ projectId, valid: true, source: 'offline', codeHint: `${code.slice(0, 4)}…${code.slice(-4)}`, activations: 1, maxActivations: 2 });
    expect(imported.graceUntil!.getTime() - Date.now()).toBeGreaterThan(29 * 24 * 3600_000);
    expect(await client.check(projectId)).toEqual(imported);
    await expect.poll(() => changes.map((c) => c.source)).toEqual(['offline']);

    // The same response again answers no pending request: refused, with the licensing code.
    const again = await rejection(client.offlineImport(response), isAgentError);
    expect(again).toMatchObject({ code: 'invalid_params', rpcCode: -32602, data: { code: 'offline_refused' } });
    expect(again.message).toMatch(/answers no pending request of this machine/);

    await close();
    const logs = readdirSync(join(home, 'log')).map((f) => readFileSync(join(home, 'log', f), 'utf8')).join('');
    expect(logs).toContain('offline response imported');
    expect(logs).not.toContain(code);
  });

  it('a request without a code (the online step gives it), a response for another machine, and junk', async () => {
    const { client } = await agentAndClient();
    const other = await agentAndClient('agent-test-2');
    const projectId = service.emulator.projectId;
    const made = await client.offlineRequest(projectId);
    expect(parseOfflineDocument(made.document, 'offline_request').code).toBeNull();

    // Another namespace derives another machine id: its response is refused here, nothing stored.
    const code = await service.code(2);
    const theirs = await other.client.offlineRequest(projectId, code);
    const wrong = await rejection(client.offlineImport(await answer(theirs.document)), isAgentError);
    expect(wrong).toMatchObject({ rpcCode: -32602, data: { code: 'offline_refused' } });
    expect(await client.check(projectId)).toMatchObject({ valid: false, reason: 'not_activated' });

    const junk = await rejection(client.offlineImport('not an offline line at all!'), isAgentError);
    expect(junk).toMatchObject({ rpcCode: -32602, data: { code: 'invalid_offline_file' } });
    const request = await rejection(client.offlineImport(made.document), isAgentError);
    expect(request.message).toMatch(/this is an offline request, not an offline response/);
    const empty = await rejection(client.offlineImport('   '), isAgentError);
    expect(empty.message).toMatch(/document must not be empty/);
    const badId = await rejection(client.offlineRequest('not-a-uuid', code), isAgentError);
    expect(badId.message).toMatch(/project_id must be a UUID/);
  });

  it('the raw answers: {document, file_name}, then a LicenseState', async () => {
    const { socketPath } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const raw = await RawClient.connect(socketPath);
    cleanups.push(() => raw.close());
    raw.request({ jsonrpc: '2.0', id: 1, method: 'offline_request', params: { project_id: projectId, code: await service.code(2) } });
    const [made] = (await raw.next()) as [{ id: number; result: { document: string; file_name: string } }];
    expect(made.id).toBe(1);
    expect(Object.keys(made.result).sort()).toEqual(['document', 'file_name']);
    expect(made.result.document).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}$/);
    raw.request({ jsonrpc: '2.0', id: 2, method: 'offline_import', params: { document: await answer(made.result.document) } });
    const [state] = (await raw.next()) as [{ id: number; result: Record<string, unknown> }];
    expect(state.result).toMatchObject({ project_id: projectId, valid: true, source: 'offline', reason: null });
  });
});

describe('an agent that predates the offline methods', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('answers -32601: the client says the license agent needs an update', async () => {
    const dir = shortDir();
    cleanups.push(() => dir.cleanup());
    const path = join(dir.dir, 'old.sock');
    server = createServer((socket) => {
      let buffered = '';
      socket.setEncoding('utf8').on('data', (d: string) => {
        buffered += d;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const { id, method } = JSON.parse(buffered.slice(0, nl)) as { id: number; method: string };
          buffered = buffered.slice(nl + 1);
          socket.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: '${method}'` } }) + '\n');
        }
      });
    });
    await new Promise<void>((r) => server!.listen(path, r));
    const client = await AgentClient.connect({ socketPath: path, reconnect: false });
    cleanups.push(() => client.close());
    for (const call of [client.offlineRequest(service.emulator.projectId, 'CODE'), client.offlineImport('x')]) {
      const err = await rejection(call, isAgentError);
      expect(err).toMatchObject({ code: 'agent_outdated', rpcCode: -32601 });
      expect(err.message).toMatch(/^the license agent needs an update: it does not know 'offline_(request|import)'/);
    }
  });
});
