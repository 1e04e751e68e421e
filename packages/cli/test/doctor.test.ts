// doctor against a healthy setup and against each problem a support ticket brings: an offline
// service, a tampered cache, a clock an hour off, a stopped agent, an expired token. Each is a
// failure or a warning with its fix, and no secret appears in the report.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent } from '@plugin-license/agent';
import { describe, expect, it } from 'vitest';
import { cli, envFor, useCliService, type Run } from './helpers.js';

const { service, home } = useCliService();

interface Check {
  section: string;
  name: string;
  level: 'ok' | 'warning' | 'failed' | 'info';
  detail: string;
  fix?: string;
}

async function doctor(env: Record<string, string>, project?: string): Promise<{ run: Run; checks: Check[]; find: (section: string, name: string) => Check | undefined }> {
  const run = await cli(['--json', 'doctor', ...(project ? ['--project', project] : [])], env);
  const doc = JSON.parse(run.stdout) as { checks: Check[]; failed: number; ok: boolean };
  expect(doc.ok).toBe(run.code === 0);
  return { run, checks: doc.checks, find: (section, name) => doc.checks.find((c) => c.section === section && c.name === name) };
}

function noSecrets(run: Run, ...secrets: string[]): void {
  for (const s of secrets) {
    expect(run.stdout).not.toContain(s);
    expect(run.stderr).not.toContain(s);
  }
}

describe('doctor', () => {
  it('a healthy machine: every section, in order, nothing failed, no secret in the report', async () => {
    const h = home();
    const env = envFor(service, h);
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    const agent = await startAgent({ baseUrl: service.emulator.baseUrl, home: h, socketPath: join(h, 'agent.sock'), logger: false });
    try {
      expect((await cli(['activate', code, '--project', projectId], env)).code).toBe(0);
      const { run, checks, find } = await doctor(env, projectId);
      expect(run.code, JSON.stringify(checks.filter((c) => c.level === 'failed'))).toBe(0);
      const order = [...new Set(checks.map((c) => c.section))];
      expect(order).toEqual(['versions', 'configuration', 'service', 'relay', 'token', 'clock', 'machine id', 'data folder', 'licenses', 'agent']);
      expect(find('configuration', 'base URL')).toMatchObject({ level: 'ok', detail: expect.stringContaining('(environment)') });
      expect(find('configuration', 'token')?.detail).toBe('set (environment)');
      expect(find('service', 'connect and TLS')?.level).toBe('ok');
      expect(find('token', 'accepted')?.level).toBe('ok');
      expect(find('clock', 'offset')).toMatchObject({ level: 'ok' });
      expect(find('machine id', 'stable')?.level).toBe('ok');
      expect(find('licenses', projectId)).toMatchObject({ level: 'ok', detail: expect.stringContaining('the service says valid (1 of 2 slots in use); stored: valid; code') });
      expect(find('agent', 'running')?.level).toBe('ok');
      expect(find('agent', 'check')?.detail).toContain('valid');
      noSecrets(run, code, service.emulator.token);
      const human = await cli(['doctor', '--project', projectId], env);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^versions\n {2}info {5}tool: plugin-license 0\.1\.0\n/);
      expect(human.stdout).toMatch(/\nconfiguration\n {2}info {5}namespace: plugin-license \(default\)/);
      expect(human.stdout).toMatch(/no problems found/);
      noSecrets(human, code, service.emulator.token);
    } finally {
      await agent.close();
    }
  });

  it('an offline service, a stopped agent, a tampered cache: failed or warning, each with its fix', async () => {
    const h = home();
    const env = envFor(service, h);
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    expect((await cli(['activate', code, '--project', projectId], env)).code).toBe(0);
    const file = join(h, 'data', 'licenses', `${projectId}.json`);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"activations":\s*1/, '"activations": 0'));
    await service.control.faults({ mode: 'offline' });
    try {
      const { run, find } = await doctor(env, projectId);
      expect(run.code).toBe(1);
      expect(find('service', 'connect and TLS')).toMatchObject({ level: 'failed', fix: expect.stringContaining('check the network connection') });
      expect(find('agent', 'running')).toMatchObject({ level: 'warning', fix: expect.stringContaining('plugin-license-agent run') });
      expect(find('licenses', projectId)).toMatchObject({ level: 'failed', detail: expect.stringContaining('cache_invalid'), fix: expect.stringContaining('activate again') });
      expect(find('clock', 'offset')?.detail).toContain('not measured');
      noSecrets(run, code, service.emulator.token);
      // Inspection never writes: the tampered file is still where it was.
      expect(readFileSync(file, 'utf8')).toContain('"activations": 0');
    } finally {
      await service.control.faults({ mode: 'none' });
    }
  });

  it('a clock two hours off the service, and an expired token', async () => {
    const h = home();
    await service.control.clock({ advance_ms: 2 * 3_600_000 });
    try {
      const expired = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ exp: 1_600_000_000 })).toString('base64url')}.c2lnbmF0dXJl`;
      const { run, find } = await doctor(envFor(service, h, { PLUGIN_LICENSE_TOKEN: expired }));
      expect(run.code).toBe(1);
      expect(find('clock', 'offset')).toMatchObject({ level: 'failed', detail: expect.stringMatching(/^2\.0 h behind the service$/), fix: expect.stringContaining('automatic date and time') });
      expect(find('token', 'expiry')).toMatchObject({ level: 'failed', fix: 'get a new token from the portal' });
      expect(find('token', 'accepted')?.level).toBe('failed');
      noSecrets(run, expired);
    } finally {
      await service.control.clock({ advance_ms: -2 * 3_600_000 });
    }
  });
});
