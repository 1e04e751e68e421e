// A release killed at every durable step (docs/license-ticket.md: the ticket says "not licensed" before
// the service is asked to release). A child process gives back the slot and kills itself with
// SIGKILL right after one step, taken from the steps an uninterrupted run passes; then the ticket
// is judged as a plugin would without the agent, a fresh reader is asked, and a restart settles.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheFilePath, judgeTicket, License, offlineDir, ticketPath } from '../src/index.js';
import { ensureBuilt, fixturesDir, packageDir, RAW_A, startService, tempHome, type TestService } from './helpers.js';

let service: TestService;
beforeAll(async () => {
  ensureBuilt();
  service = await startService();
}, 120_000);
afterAll(async () => {
  await service?.close();
});

type Op = 'deactivate' | 'offline-release';

interface Killed {
  steps: string[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

function runKiller(home: string, op: Op, killAt: string): Promise<Killed> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(fixturesDir, 'release-killer.mjs'), home, service.emulator.projectId, RAW_A, service.emulator.baseUrl, op, killAt], {
      cwd: packageDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve({ steps: out.split('\n').filter((l) => l.startsWith('step ')).map((l) => l.slice(5)), signal, stderr }));
  });
}

/** Each step of a run as LABEL#N (the Nth time it passes), in order. */
function numbered(steps: string[]): string[] {
  const count = new Map<string, number>();
  return steps.map((s) => {
    const n = (count.get(s) ?? 0) + 1;
    count.set(s, n);
    return `${s}#${n}`;
  });
}

async function activated(): Promise<{ home: { dir: string; cleanup: () => void }; code: string }> {
  const home = tempHome();
  const code = await service.code();
  const l = open(home.dir);
  expect(await l.activate(code)).toMatchObject({ valid: true });
  await l.close();
  return { home, code };
}

function open(home: string): License {
  return new License({
    projectId: service.emulator.projectId,
    baseUrl: service.emulator.baseUrl,
    home,
    dispatcher: service.dispatcher,
    rawMachineIdProvider: () => RAW_A,
    policy: { lockStaleMs: 2000 }, // a lock left by a killed run is taken over after 2 s
  });
}

const verdict = (home: string) =>
  judgeTicket(ticketPath({ home }, service.emulator.projectId), { app: 'plugin-license', projectId: service.emulator.projectId, now: Math.floor(Date.now() / 1000), rawMachineId: RAW_A });
const slots = async (code: string): Promise<number> => (await service.admin.activation.status(code)).activations;
const intents = (home: string): string[] => {
  const dir = join(home, 'data', 'licenses', 'intents');
  return existsSync(dir) ? readdirSync(dir) : [];
};

/** The durable steps of a deactivation, in order: recorded and "not licensed" before the service is asked. */
const DEACTIVATE = ['intent-recorded', 'ticket-written', 'release-answered', 'ticket-written', 'state-removed', 'intent-cleared'];
/** The offline release's: recorded and "not licensed" before the proof exists. */
const OFFLINE_RELEASE = ['intent-recorded', 'ticket-written', 'release-proof-written', 'ticket-written', 'state-removed', 'intent-cleared'];

describe('deactivate killed at every step', () => {
  const steps = numbered(DEACTIVATE);

  it('an uninterrupted run: the release is recorded and the ticket says "not licensed" before the service answers', async () => {
    const { home, code } = await activated();
    try {
      const run = await runKiller(home.dir, 'deactivate', 'none');
      expect(run.stderr).toBe('');
      expect(run.steps).toEqual(DEACTIVATE);
      expect(await slots(code)).toBe(0);
      expect(verdict(home.dir)).toMatchObject({ verdict: 'not_licensed', reason: 'not_activated' });
    } finally {
      home.cleanup();
    }
  });

  it('after each step: a slot the service freed is granted by no ticket and no reader; a restart makes state, ticket and slot agree', async () => {
    for (const step of steps) {
      const { home, code } = await activated();
      try {
        const run = await runKiller(home.dir, 'deactivate', step);
        expect(run.signal, step).toBe('SIGKILL');
        expect(run.steps.length, step).toBe(steps.indexOf(step) + 1);
        const released = (await slots(code)) === 0;
        expect(released, step).toBe(steps.indexOf(step) >= steps.indexOf('release-answered#1'));
        const ticket = verdict(home.dir);
        // The rule: once the service may have released, the ticket grants nothing.
        if (steps.indexOf(step) >= steps.indexOf('ticket-written#1')) expect(ticket.verdict, step).not.toBe('valid');
        if (released) expect(ticket.verdict, step).not.toBe('valid');
        // A reader that does not settle (check(), the agent before it asks the service) grants nothing either.
        const reader = open(home.dir);
        if (released) expect(reader.check().valid, step).toBe(false);
        await reader.close();

        // The next start settles with the service: the three agree, nothing is left pending.
        const restarted = open(home.dir);
        const settled = await restarted.settle();
        await restarted.close();
        const held = (await slots(code)) === 1;
        expect(held, step).toBe(!released);
        expect(settled.valid, step).toBe(held);
        expect(verdict(home.dir).verdict, step).toBe(held ? 'valid' : 'not_licensed');
        expect(existsSync(cacheFilePath(service.emulator.projectId, { home: home.dir })), step).toBe(held);
        expect(intents(home.dir), step).toEqual([]);
      } finally {
        home.cleanup();
      }
    }
  }, 120_000);
});

describe('offline release killed at every step', () => {
  const steps = numbered(OFFLINE_RELEASE);
  const proofFile = (home: string): string => join(offlineDir({ home }), `${service.emulator.projectId}.release.json`);

  it('an uninterrupted run: the ticket says "not licensed" before the proof exists', async () => {
    const { home } = await activated();
    try {
      const run = await runKiller(home.dir, 'offline-release', 'none');
      expect(run.stderr).toBe('');
      expect(run.steps).toEqual(OFFLINE_RELEASE);
      expect(verdict(home.dir)).toMatchObject({ verdict: 'not_licensed', reason: 'not_activated' });
    } finally {
      home.cleanup();
    }
  });

  it('after each step: once a proof exists no ticket grants the license, and the release run again finishes it', async () => {
    for (const step of steps) {
      const { home } = await activated();
      try {
        const run = await runKiller(home.dir, 'offline-release', step);
        expect(run.signal, step).toBe('SIGKILL');
        const proof = existsSync(proofFile(home.dir));
        expect(proof, step).toBe(steps.indexOf(step) >= steps.indexOf('release-proof-written#1'));
        if (steps.indexOf(step) >= steps.indexOf('ticket-written#1')) expect(verdict(home.dir).verdict, step).toBe('not_licensed');
        if (proof) {
          const reader = open(home.dir);
          expect(reader.check().valid, step).toBe(false);
          await reader.close();
        }
        const again = await runKiller(home.dir, 'offline-release', 'none');
        expect(again.signal, step).toBeNull();
        expect(existsSync(proofFile(home.dir)), step).toBe(true);
        expect(verdict(home.dir), step).toMatchObject({ verdict: 'not_licensed', reason: 'not_activated' });
        expect(intents(home.dir), step).toEqual([]);
      } finally {
        home.cleanup();
      }
    }
  }, 60_000);
});
