// The command-line tool under deliberate faults (issue 20): a proxy that accepts and never
// answers, a download that stalls, a full disk behind --out and behind stdout, a closed pipe, a
// device or a pipe given as an input file, interrupts while waiting. Each is driven for real:
// real sockets on loopback, a real tmpfs, real signals, the built binary.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fullDisk, startSilentServer, startTamperingProxy } from '@plugin-license/test-utils';
import { describe, expect, it } from 'vitest';
import { CLI, cli, envFor, jsonOf, useCliService } from './helpers.js';

const { service, home } = useCliService();

/**
 * A CONNECT proxy that passes everything, but stops forwarding a stream after its first 60,000
 * bytes (a stalled download). `stalled` settles when a stream first has bytes held back: the
 * client is then mid-download, whatever the machine's speed.
 */
async function stallingProxy(): Promise<{ url: string; stalled: Promise<void>; close(): Promise<void> }> {
  let markStalled!: () => void;
  const stalled = new Promise<void>((resolve) => (markStalled = resolve));
  const proxy = await startTamperingProxy((chunk, offset) => {
    const room = 60_000 - offset;
    if (chunk.length <= room) return chunk;
    markStalled(); // the connection stays open, nothing more arrives
    return chunk.subarray(0, Math.max(0, room));
  });
  return { ...proxy, stalled };
}

/** Settles once process `pid` has `path` open (Linux's /proc; lsof elsewhere). */
async function hasOpened(pid: number, path: string): Promise<void> {
  const opened = (): boolean => {
    if (existsSync('/proc/self/fd')) {
      try {
        return readdirSync(`/proc/${pid}/fd`).some((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
          } catch {
            return false;
          }
        });
      } catch {
        return false; // gone, or not started yet
      }
    }
    const listed = spawnSync('lsof', ['-p', String(pid), '-Fn'], { encoding: 'utf8' });
    return listed.stdout.split('\n').includes(`n${path}`);
  };
  // The command opens the pipe once it has started.
  await expect.poll(opened).toBe(true);
}

async function finishedBuild(): Promise<string> {
  await service.control.buildSettings({ step_ms: 10, fail_rate: 0, seed: 0 });
  const created = await service.admin.builds.create({ project_id: service.emulator.projectId });
  await service.control.clock({ advance_ms: 1000 });
  return created.id;
}

describe('one deadline per request, whatever carries it', () => {
  it('through a proxy that accepts and never answers: status, activate, builds list and doctor end within the deadline, saying so', async () => {
    const proxy = await startSilentServer();
    try {
      const env = envFor(service, home(), { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, PLUGIN_LICENSE_TIMEOUT: '1' });
      const code = await service.code(1);
      for (const args of [['status', code], ['activate', code, '--project', service.emulator.projectId], ['builds', 'list'], ['doctor']]) {
        const started = Date.now();
        const run = await cli(args, env);
        const took = Date.now() - started;
        expect(run.code, `${args[0]}: ${run.stderr}`).toBe(1);
        // Bounded by the deadline (three attempts of 1 s and their back-off), never by the proxy.
        expect(took, args[0]).toBeLessThan(20_000);
        if (args[0] !== 'doctor') expect(run.stderr, args[0]).toMatch(/within 1000 ms|no answer/);
      }
    } finally {
      await proxy.close();
    }
  });

  it('a download that stalls ends after three deadlines without a byte, its partial file deleted', async () => {
    const id = await finishedBuild();
    const proxy = await stallingProxy();
    try {
      const out = join(home(), 'stalled');
      mkdirSync(out);
      const env = envFor(service, home(), { HTTP_PROXY: proxy.url, PLUGIN_LICENSE_TIMEOUT: '1' });
      const run = await cli(['builds', 'download', id, '--out', out], env);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/stalled: nothing arrived for 3 s; the partial file was deleted/);
      expect(readdirSync(out)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('builds download keeps what is already there', () => {
  it('files whose checksum matches are kept, the rest fetched; a different file is never overwritten; Ctrl-C still lists what was fetched and kept', async () => {
    const id = await finishedBuild();
    const env = envFor(service, home());
    const out = join(home(), 'dist');
    const { artifacts } = await service.admin.builds.artifacts(id);
    const first = await cli(['builds', 'download', id, artifacts[0]!.id, '--out', `${out}/`], env);
    expect(first.code, first.stderr).toBe(0);
    const run = await cli(['--json', 'builds', 'download', id, '--out', out], env);
    expect(run.code, run.stderr).toBe(0);
    const doc = jsonOf(run) as { downloaded: Array<{ file: string }>; kept: Array<{ file: string }> };
    expect(doc.kept.map((k) => k.file)).toEqual([join(out, artifacts[0]!.file_name)]);
    expect(doc.downloaded).toHaveLength(artifacts.length - 1);
    for (const a of artifacts) expect(createHash('sha256').update(readFileSync(join(out, a.file_name))).digest('hex')).toBe(a.checksum_sha256);
    // All there: nothing fetched, every file kept.
    const again = await cli(['builds', 'download', id, '--out', out], env);
    expect(again.code).toBe(0);
    expect(again.stdout.match(/kept \(already here\)/g)).toHaveLength(artifacts.length);
    // A different file under an artifact's name: refused before anything is fetched.
    writeFileSync(join(out, artifacts[1]!.file_name), 'something else');
    const refused = await cli(['builds', 'download', id, '--out', out], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is not this artifact \(its checksum differs\)/);

    // Interrupted mid-way (the second artifact stalls behind a proxy): what was fetched and kept is listed.
    const fresh = join(home(), 'fresh');
    mkdirSync(fresh);
    const proxy = await stallingProxy();
    try {
      await cli(['builds', 'download', id, artifacts[0]!.id, '--out', `${fresh}/`], env);
      // Ctrl-C once the second artifact's download has stalled (not after a guessed time).
      const partial = await cli(['builds', 'download', id, '--out', fresh], { ...env, HTTP_PROXY: proxy.url }, (child) => {
        void proxy.stalled.then(() => child.kill('SIGINT'));
      });
      expect(partial.code).toBe(130);
      expect(partial.stdout).toContain(`${artifacts[0]!.file_name}`);
      expect(partial.stdout).toMatch(/kept \(already here\)/);
      expect(partial.stderr).toMatch(/interrupted: \d+ of \d+ artifacts downloaded, 1 already here/);
      expect(readdirSync(fresh).filter((f) => f.endsWith('.part'))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('output that cannot be written', () => {
  it('status | head -1 ends quietly; --json > /dev/full and offline activate --text > /dev/full say so in one line, no stack trace', async () => {
    const env = envFor(service, home());
    const code = await service.code(2);
    const shell = (command: string) =>
      new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
        execFile('/bin/sh', ['-c', command], { env: { ...env, PLC: CLI, CODE: code } }, (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }));
      });
    const head = await shell('node "$PLC" status "$CODE" | head -1; echo "rc=${PIPESTATUS:-$?}"');
    expect(head.stderr).toBe('');
    const full = await shell('node "$PLC" --json status "$CODE" > /dev/full');
    expect(full.code).toBe(1);
    expect(full.stderr.trim().split('\n')).toHaveLength(1);
    expect(full.stderr).toMatch(/could not write the output \(ENOSPC: the disk is full\)/);

    const studio = join(home(), 'studio');
    mkdirSync(studio);
    const request = join(studio, 'request.json');
    expect((await cli(['offline', 'request', '--project', service.emulator.projectId, '--code', code, '--out', request], envFor(undefined, studio))).code).toBe(0);
    const text = await shell(`node "$PLC" offline activate "${request}" --text > /dev/full`);
    expect(text.code).toBe(1);
    expect(text.stderr).not.toMatch(/\n\s+at /);
    expect(text.stderr).toMatch(/could not write the response to standard output \(ENOSPC\); the service has answered \(the slot is taken\); answering the same request again takes no second slot/);
    // As it says: the same command again takes no second slot.
    const retried = await cli(['offline', 'activate', request, '--out', join(studio, 'response.json')], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect((await service.admin.activation.status(code)).activations).toBe(1);
  });

  it('offline activate --out on a full disk asks nothing of the service and leaves no file', async (ctx) => {
    const disk = join(home(), 'disk');
    const full = fullDisk(disk);
    if (!full.ok) return ctx.skip(full.reason);
    try {
      const env = envFor(service, home());
      const code = await service.code(1);
      const studio = join(home(), 'studio');
      mkdirSync(studio);
      const request = join(studio, 'request.json');
      expect((await cli(['offline', 'request', '--project', service.emulator.projectId, '--code', code, '--out', request], envFor(undefined, studio))).code).toBe(0);
      const run = await cli(['offline', 'activate', request, '--out', join(disk, 'response.json')], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/cannot write .*response\.json \(ENOSPC\); free some space or choose another --out file \(nothing was done\)/);
      expect(existsSync(join(disk, 'response.json'))).toBe(false);
      expect((await service.admin.activation.status(code)).activations).toBe(0);
    } finally {
      full.undo();
    }
  });
});

describe('inputs are bounded by what is read, and every wait can be interrupted', () => {
  it('offline import /dev/zero stops past the largest offline file', async () => {
    const run = await cli(['offline', 'import', '/dev/zero'], envFor(undefined, home()));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/\/dev\/zero is far larger than an offline response/);
  });

  it('a pipe with no writer waits, and Ctrl-C ends the wait at once (exit 130)', async () => {
    const fifo = join(home(), 'response.fifo');
    await new Promise<void>((resolve, reject) => execFile('mkfifo', [fifo], (e) => (e ? reject(e) : resolve())));
    let interruptedAt = 0;
    // Ctrl-C once the command has the pipe open and waits on it (not after a guessed time).
    const run = await cli(['offline', 'import', fifo], envFor(undefined, home()), (child) => {
      void hasOpened(child.pid!, fifo).then(() => {
        interruptedAt = Date.now();
        child.kill('SIGINT');
      });
    });
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/interrupted while waiting for the response/);
    // "At once": an upper bound on ending, with slack for a loaded machine.
    expect(Date.now() - interruptedAt).toBeLessThan(10_000);
    rmSync(fifo, { force: true });
  });
});

describe('every printed next step works as printed', () => {
  it('the offline exchange, run by copying each hint', async () => {
    const code = await service.code(1);
    const studio = join(home(), 'studio');
    const online = join(home(), 'online');
    mkdirSync(studio);
    mkdirSync(online);
    const studioEnv = envFor(undefined, studio);
    const onlineEnv = envFor(service, online);
    const hintOf = (stderr: string, lead: RegExp): string[] => {
      const line = stderr.split('\n').find((l) => lead.test(l));
      expect(line, stderr).toBeDefined();
      const command = line!.replace(/^.*?: (plugin-license .*)$/, '$1');
      return command.split(' ').slice(1); // the program name is ours; the words after it are the user's
    };
    const req = await cli(['offline', 'request', '--project', service.emulator.projectId, '--code', code, '--out', join(studio, 'studio-request.json')], studioEnv);
    expect(req.code).toBe(0);
    // Carried to the online computer's folder, then run as printed there.
    writeFileSync(join(online, 'studio-request.json'), readFileSync(join(studio, 'studio-request.json')));
    const step2 = hintOf(req.stderr, /^Next, on a computer that is online/);
    expect(step2).toEqual(['offline', 'activate', 'studio-request.json', '--out', 'studio-response.json']);
    const answered = await runIn(online, step2, onlineEnv);
    expect(answered.code, answered.stderr).toBe(0);
    writeFileSync(join(studio, 'studio-response.json'), readFileSync(join(online, 'studio-response.json')));
    const step3 = hintOf(answered.stderr, /^Response written to/);
    const imported = await runIn(studio, step3, studioEnv);
    expect(imported.code, imported.stderr).toBe(0);
    // The text form: the hints read from standard input.
    const textReq = await cli(['offline', 'request', '--project', service.emulator.projectId, '--renew', '--text'], studioEnv);
    expect(hintOf(textReq.stderr, /^Next, on a computer that is online/)).toEqual(['offline', 'activate', '-', '--text']);
  });
});

function runIn(dir: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
