import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentClient, isAgentError } from '../src/index.js';
import { rejection } from '@plugin-license/test-utils';
import { shortDir, startTestAgent, UNKNOWN_PROJECT, useTestService } from './helpers.js';

const { service, cleanups } = useTestService();

describe('socket placement and permissions', () => {
  it('folder 0700 and socket 0600, owned by this user', async () => {
    const t = await startTestAgent(service);
    cleanups.push(() => t.cleanup());
    const dir = lstatSync(join(t.socketPath, '..'));
    const sock = lstatSync(t.socketPath);
    expect(sock.isSocket()).toBe(true);
    expect(sock.mode & 0o777).toBe(0o600);
    expect(dir.mode & 0o777).toBe(0o700);
    expect(sock.uid).toBe(process.getuid!());
    expect(dir.uid).toBe(process.getuid!());
  });

  it('tightens an existing private folder of ours to 0700, refuses a group/world-writable one', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const readable = join(d.dir, 'r');
    mkdirSync(readable, { mode: 0o755 });
    chmodSync(readable, 0o755);
    const ok = await startTestAgent(service, {}, { home: join(d.dir, 'home'), socketPath: join(readable, 'a.sock') });
    await ok.agent.close();
    expect(lstatSync(readable).mode & 0o777).toBe(0o700);
    const open = join(d.dir, 'w');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const err = await rejection(startTestAgent(service, {}, { home: join(d.dir, 'home'), socketPath: join(open, 'a.sock') }), isAgentError);
    expect(err).toMatchObject({ code: 'socket_dir_unsafe', message: expect.stringMatching(/is writable by other users \(owner .*mode 0777\)/) });
  });

  it('a path over the sun_path limit is an error, never truncated', async () => {
    const err = await rejection(startTestAgent(service, {}, { home: '/tmp/unused-home', socketPath: '/tmp/' + 'x'.repeat(110) + '/agent.sock' }), isAgentError);
    expect(err).toMatchObject({ code: 'socket_path_too_long' });
  });

  it('a second agent on a live socket is refused with a clear message', async () => {
    const t = await startTestAgent(service);
    cleanups.push(() => t.cleanup());
    const err = await rejection(startTestAgent(service, {}, { home: t.home, socketPath: t.socketPath }), isAgentError);
    expect(err).toMatchObject({ code: 'socket_in_use', message: expect.stringContaining('another agent is already running') });
    const client = await AgentClient.connect({ socketPath: t.socketPath, reconnect: false });
    expect(await client.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false });
    client.close();
  });

  it('a stale socket (its agent was killed) is removed and the new agent starts', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socketPath = join(d.dir, 's', 'agent.sock');
    mkdirSync(join(d.dir, 's'), { mode: 0o700 });
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => child.stdout!.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(lstatSync(socketPath).isSocket()).toBe(true);
    const t = await startTestAgent(service, {}, { home: join(d.dir, 'home'), socketPath });
    cleanups.push(() => t.cleanup());
    const client = await AgentClient.connect({ socketPath, reconnect: false });
    expect((await client.hello()).protocol).toBe(1);
    client.close();
  });

  it('a regular file where the socket should be is left alone and reported', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    mkdirSync(join(d.dir, 's'), { mode: 0o700 });
    const socketPath = join(d.dir, 's', 'agent.sock');
    writeFileSync(socketPath, 'precious');
    const err = await rejection(startTestAgent(service, {}, { home: join(d.dir, 'home'), socketPath }), isAgentError);
    expect(err).toMatchObject({ code: 'socket_in_use', message: expect.stringContaining('is not a socket') });
    expect(existsSync(socketPath)).toBe(true);
  });
});

describe('another user (needs root to create one)', () => {
  const isRoot = process.getuid?.() === 0;
  const hasUseradd = spawnSync('sh', ['-c', 'command -v useradd && command -v userdel']).status === 0;

  it('is refused by the folder and by the socket itself (EACCES)', async () => {
    if (!isRoot || !hasUseradd) {
      console.log(`not run as root with useradd (uid ${process.getuid?.()}, useradd ${hasUseradd ? 'present' : 'missing'}): checked instead that the modes deny others`);
      const t = await startTestAgent(service);
      cleanups.push(() => t.cleanup());
      expect(lstatSync(t.socketPath).mode & 0o077).toBe(0);
      expect(lstatSync(join(t.socketPath, '..')).mode & 0o077).toBe(0);
      return;
    }
    const name = `plagent${process.pid}`;
    const add = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', name], { encoding: 'utf8' });
    expect(add.status, add.stderr).toBe(0);
    cleanups.push(() => void spawnSync('userdel', [name]));
    const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
    // A Node the other user can run: the test's own may sit in root's home (e.g. a Node fetched by npx).
    const nodeForThem = [process.execPath, '/usr/bin/node', '/usr/local/bin/node', '/bin/node'].find(
      (bin) => existsSync(bin) && spawnSync(bin, ['-e', '0'], { uid, gid, cwd: '/' }).status === 0,
    );
    if (!nodeForThem) {
      console.log(`no Node binary that user ${name} may run (tried ${process.execPath} and the system paths): checked only that the modes deny others`);
      const t = await startTestAgent(service);
      cleanups.push(() => t.cleanup());
      expect(lstatSync(t.socketPath).mode & 0o077).toBe(0);
      return;
    }
    const t = await startTestAgent(service);
    cleanups.push(() => t.cleanup());
    const tryConnect = () =>
      spawnSync(nodeForThem, ['-e', `require('net').createConnection(${JSON.stringify(t.socketPath)}).on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',e=>{console.log(e.code);process.exit(0)})`], {
        uid,
        gid,
        encoding: 'utf8',
        cwd: '/',
      }).stdout.trim();
    // The 0700 folder stops the other user first …
    expect(tryConnect()).toBe('EACCES');
    // … and with the folder (and the test's private folder above it) opened for the test, the
    // 0600 socket still does; opened too, it would let them in: the check can tell.
    const folder = join(t.socketPath, '..');
    const above = join(folder, '..');
    chmodSync(above, 0o711);
    chmodSync(folder, 0o711);
    try {
      expect(tryConnect()).toBe('EACCES');
      chmodSync(t.socketPath, 0o666);
      expect(tryConnect()).toBe('CONNECTED');
    } finally {
      chmodSync(folder, 0o700);
      chmodSync(above, 0o700);
    }
    // A folder created by that other user (to intercept the agent) is refused.
    const d = shortDir();
    cleanups.push(d.cleanup);
    const theirs = join(d.dir, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, uid, gid);
    const err = await rejection(startTestAgent(service, {}, { home: join(d.dir, 'home'), socketPath: join(theirs, 'a.sock') }), isAgentError);
    expect(err).toMatchObject({ code: 'socket_dir_unsafe', message: expect.stringContaining(`belongs to ${name} (uid ${uid}, mode 0700), not to you`) });
  });
});
