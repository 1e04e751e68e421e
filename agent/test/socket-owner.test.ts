import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answeringPeer, otherUserUnavailable, OTHER_UID, rejection, squatSocket } from '@plugin-license/test-utils';
import { AgentClient, checkSocketOwner, isAgentError, resolveSocketPath, type AgentError } from '../src/index.js';
import { shortDir, startTestAgent, UNKNOWN_PROJECT, useTestService } from './helpers.js';

const { service, cleanups } = useTestService();
const unavailable = otherUserUnavailable();
const me = userInfo();

function base(): string {
  const d = shortDir();
  cleanups.push(d.cleanup);
  return d.dir;
}

function folder(path: string, mode = 0o700, uid?: number): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
  if (uid !== undefined) chownSync(path, uid, uid);
  return path;
}

async function listen(path: string, onSocket: (s: Socket) => void = () => undefined): Promise<Server> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

function refusal(socketPath: string, role: 'agent' | 'client' = 'client'): AgentError {
  try {
    checkSocketOwner(socketPath, { role });
  } catch (err) {
    if (isAgentError(err)) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(socketPath)} to be refused`);
}

describe('checkSocketOwner: the one rule for "this socket path is the user\'s own"', () => {
  it('accepts a private folder of ours whatever its name holds: spaces, quotes, $, a backslash, a newline, a glob, non-ASCII', async () => {
    const b = base();
    for (const name of ['a b', "it's", '"q"', '$HOME', 'back\\slash', 'new\nline', '*', 'ünï-音']) {
      const dir = folder(join(b, name));
      const sock = join(dir, 'agent.sock');
      expect(checkSocketOwner(sock), name).toEqual({ socket: 'absent', folder: dir });
      await listen(sock);
      expect(checkSocketOwner(sock), name).toEqual({ socket: 'present', folder: dir });
    }
  });

  it('a folder or file that does not exist yet is absent; a Windows pipe name is not checked here', () => {
    const b = base();
    expect(checkSocketOwner(join(b, 'none', 'deeper', 'agent.sock'))).toEqual({ socket: 'absent' });
    expect(checkSocketOwner('\\\\.\\pipe\\acme-agent-me')).toEqual({ socket: 'unchecked' });
  });

  it('refuses our folder when group or others may write it, a link, a file, a FIFO or a device in its place', () => {
    const b = base();
    for (const mode of [0o777, 0o770, 0o703, 0o720]) {
      const dir = folder(join(b, `m${mode.toString(8)}`), mode);
      const err = refusal(join(dir, 'agent.sock'));
      expect(err.code).toBe('socket_dir_unsafe');
      expect(err.message).toContain(`the agent's socket folder ${dir} is writable by other users (owner ${me.username} (uid ${me.uid}, mode 0${mode.toString(8)}))`);
      expect(err.message).toContain('nothing was sent to it');
      expect(err.message).toContain(`chmod 700 ${dir}`);
      expect(err.holder).toEqual({ path: dir, uid: me.uid, user: me.username, mode: `0${mode.toString(8)}` });
    }
    const target = folder(join(b, 'target'));
    symlinkSync(target, join(b, 'link'));
    expect(refusal(join(b, 'link', 'agent.sock')).message).toContain(`the agent's socket folder ${join(b, 'link')} is a symbolic link to ${target}`);
    writeFileSync(join(b, 'file'), '');
    expect(refusal(join(b, 'file', 'agent.sock')).message).toContain(`the agent's socket folder ${join(b, 'file')} is not a folder`);
    expect(spawnSync('mkfifo', [join(b, 'fifo')]).status).toBe(0);
    expect(refusal(join(b, 'fifo', 'agent.sock')).message).toContain('is not a folder');
    expect(refusal('/dev/null/agent.sock').message).toContain("the agent's socket folder /dev/null is not a folder");
  });

  it('refuses a socket path that is a link, even to a socket of ours', async () => {
    const dir = folder(join(base(), 's'));
    await listen(join(dir, 'real.sock'));
    symlinkSync(join(dir, 'real.sock'), join(dir, 'agent.sock'));
    expect(refusal(join(dir, 'agent.sock')).message).toContain(`the agent's socket ${join(dir, 'agent.sock')} is a symbolic link to ${join(dir, 'real.sock')}`);
  });

  it('walks every folder above, as the kernel does: writable without the sticky bit, a link loop, refused; sticky and our own links accepted', () => {
    const b = base();
    const open = folder(join(b, 'open'), 0o777);
    folder(join(open, 's'));
    expect(refusal(join(open, 's', 'agent.sock')).message).toContain(`${open}, a folder above the agent's socket, is writable by other users without the sticky bit (owner ${me.username} (uid ${me.uid}, mode 0777))`);
    const sticky = folder(join(b, 'sticky'), 0o1777);
    folder(join(sticky, 's'));
    expect(checkSocketOwner(join(sticky, 's', 'agent.sock')).socket).toBe('absent');
    const ours = folder(join(b, 'ours'));
    folder(join(ours, 's'));
    symlinkSync(ours, join(b, 'to-ours'));
    expect(checkSocketOwner(join(b, 'to-ours', 's', 'agent.sock'))).toEqual({ socket: 'absent', folder: join(ours, 's') });
    symlinkSync('l2', join(b, 'l1'));
    symlinkSync('l1', join(b, 'l2'));
    expect(refusal(join(b, 'l1', 's', 'agent.sock')).message).toContain('links on the way to the agent\'s socket (a loop)');
    // Relative paths are read from the working folder, as connect() reads them.
    expect(checkSocketOwner(relative(process.cwd(), join(ours, 's', 'agent.sock')))).toEqual({ socket: 'absent', folder: join(ours, 's') });
  });

  it('says that the agent did not start, when the agent asks', () => {
    const dir = folder(join(base(), 'w'), 0o777);
    const err = refusal(join(dir, 'agent.sock'), 'agent');
    expect(err.message).toContain('the agent did not start');
    expect(err.message).not.toContain('nothing was sent');
  });
});

describe.skipIf(unavailable !== undefined)('another user (uid 65534, by setpriv)', () => {
  it('refuses folders, links and sockets that user holds, on the way or at the end', async () => {
    const b = base();
    chmodSync(b, 0o755);
    const theirs = folder(join(b, 'theirs'), 0o755, OTHER_UID);
    const err = refusal(join(theirs, 'agent.sock'));
    expect(err.message).toContain(`the agent's socket folder ${theirs} belongs to nobody (uid 65534, mode 0755), not to you (root (uid 0))`);
    expect(err.holder).toEqual({ path: theirs, uid: OTHER_UID, user: 'nobody', mode: '0755' });
    folder(join(theirs, 'inner'));
    expect(refusal(join(theirs, 'inner', 'agent.sock')).message).toContain(`${theirs}, a folder above the agent's socket, belongs to nobody (uid 65534, mode 0755)`);
    // A link of theirs on the way, in a sticky folder like /tmp: they choose where it points.
    const sticky = folder(join(b, 'sticky'), 0o1777);
    const ours = folder(join(b, 'ours'));
    folder(join(ours, 's'));
    symlinkSync(ours, join(sticky, 'ln'));
    lchownSync(join(sticky, 'ln'), OTHER_UID, OTHER_UID);
    expect(refusal(join(sticky, 'ln', 's', 'agent.sock')).message).toContain(`${join(sticky, 'ln')}, a link on the way to the agent's socket, belongs to nobody`);
    // `..` after a link is the parent of the link's target (theirs), not the lexical parent (ours).
    symlinkSync(join(theirs, 'inner'), join(b, 'into'));
    folder(join(b, 's'));
    expect(checkSocketOwner(join(b, 's', 'agent.sock')).socket).toBe('absent');
    expect(refusal(`${join(b, 'into')}/../s/agent.sock`).message).toContain(`${theirs}, a folder above the agent's socket, belongs to nobody`);
    // A socket file of theirs in a folder of ours.
    const mine = folder(join(b, 'mine'));
    await listen(join(mine, 'agent.sock'));
    lchownSync(join(mine, 'agent.sock'), OTHER_UID, OTHER_UID);
    expect(refusal(join(mine, 'agent.sock')).message).toContain(`the agent's socket ${join(mine, 'agent.sock')} belongs to nobody (uid 65534`);
  });

  // The attack of the issue: the default path without XDG_RUNTIME_DIR, its folder made first by another user who listens.
  async function squatted(prepare: (socketPath: string) => void, after?: (socketPath: string) => void) {
    const namespace = `plsq-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const socketPath = resolveSocketPath({ namespace, platform: 'linux', env: {}, uid: 0 });
    cleanups.push(() => void spawnSync('rm', ['-rf', join(socketPath, '..'), `${join(socketPath, '..')}-target`]));
    prepare(socketPath);
    const squatter = await squatSocket(socketPath);
    cleanups.push(() => squatter.stop());
    after?.(socketPath);
    return { namespace, socketPath, squatter };
  }

  const cases: Array<{ name: string; prepare: (p: string) => void; after?: (p: string) => void; says: (p: string) => string }> = [
    {
      name: 'the folder made by the other user',
      prepare: (p) => void folder(join(p, '..'), 0o755, OTHER_UID),
      says: (p) => `the agent's socket folder ${join(p, '..')} belongs to nobody (uid 65534, mode 0755), not to you (root (uid 0))`,
    },
    {
      name: 'a folder of ours that others may write',
      prepare: (p) => void folder(join(p, '..'), 0o777),
      says: (p) => `the agent's socket folder ${join(p, '..')} is writable by other users (owner root (uid 0, mode 0777))`,
    },
    {
      name: 'the folder a link of theirs to their folder',
      prepare: (p) => {
        const target = folder(`${join(p, '..')}-target`, 0o755, OTHER_UID);
        symlinkSync(target, join(p, '..'));
        lchownSync(join(p, '..'), OTHER_UID, OTHER_UID);
      },
      says: (p) => `the agent's socket folder ${join(p, '..')} is a symbolic link to ${join(p, '..')}-target (owner nobody (uid 65534`,
    },
    {
      name: 'the socket file of theirs in a private folder of ours',
      // Opened while they bind (a folder that was once open), private again after.
      prepare: (p) => void folder(join(p, '..'), 0o777),
      after: (p) => chmodSync(join(p, '..'), 0o700),
      says: (p) => `the agent's socket ${p} belongs to nobody (uid 65534, mode 0777), not to you (root (uid 0))`,
    },
  ];

  for (const c of cases) {
    it(`AgentClient sends nothing, not even a connection, and says who holds the path: ${c.name}`, async () => {
      const { socketPath, squatter } = await squatted(c.prepare, c.after);
      const err = await rejection(AgentClient.connect({ socketPath, connectTimeoutMs: 1000, reconnect: false }), isAgentError);
      expect(err.code).toBe('socket_dir_unsafe');
      expect(err.message).toContain(c.says(socketPath));
      expect(err.message).toContain('nothing was sent to it');
      expect(err.message).toMatch(/PLUGIN_LICENSE_SOCKET/);
      // A client that reconnects gives up at once: another user's path does not become ours by waiting.
      const again = await rejection(AgentClient.connect({ socketPath, connectTimeoutMs: 1000 }), isAgentError);
      expect(again.code).toBe('socket_dir_unsafe');
      expect(await squatter.received()).toEqual({ connections: 0, bytes: 0, text: '' });
    });
  }

  it('the agent does not start in the folder the other user made, and says who holds it', async () => {
    const { socketPath, squatter } = await squatted(cases[0]!.prepare);
    const err = await rejection(startTestAgent(service, {}, { home: join(base(), 'home'), socketPath }), isAgentError);
    expect(err.code).toBe('socket_dir_unsafe');
    expect(err.message).toContain(cases[0]!.says(socketPath));
    expect(err.message).toContain('the agent did not start');
    expect(await squatter.received()).toEqual({ connections: 0, bytes: 0, text: '' });
  });

  it('our own agent on the same default path form still answers', async () => {
    const namespace = `plok-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const socketPath = resolveSocketPath({ namespace, platform: 'linux', env: {}, uid: 0 });
    cleanups.push(() => void spawnSync('rm', ['-rf', join(socketPath, '..')]));
    const t = await startTestAgent(service, {}, { home: join(base(), 'home'), socketPath });
    cleanups.push(() => t.cleanup());
    const client = await AgentClient.connect({ socketPath, reconnect: false });
    cleanups.push(() => client.close());
    expect(await client.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false, reason: 'not_activated' });
  });
});

if (unavailable !== undefined) {
  describe('another user', () => {
    it.skip(`skipped: ${unavailable}`, () => undefined);
  });
}

describe('an answer that cannot be read', () => {
  /** A peer in a private folder of ours that answers every request with `answer(id, method)`. */
  async function peer(answer: (id: unknown, method: string) => string): Promise<string> {
    const path = join(folder(join(base(), 's')), 'agent.sock');
    const server = await answeringPeer(path, answer);
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return path;
  }

  const table: Array<{ name: string; answer: (id: unknown, method: string) => string; says: string }> = [
    { name: 'garbage', answer: () => 'HTTP/1.1 400 Bad Request', says: 'it sent a line that is not JSON' },
    { name: 'a JSON array', answer: () => '[1,2,3]', says: 'it sent JSON that is not a JSON-RPC message' },
    { name: 'a JSON string', answer: () => '"hello"', says: 'it sent JSON that is not a JSON-RPC message' },
    { name: 'a state of the wrong shape', answer: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: { valid: 'yes', code: 'SECRET-CODE-1234' } }), says: "its answer to 'check' is not of the protocol's shape (project_id: " },
    { name: 'a result of null', answer: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: null }), says: "its answer to 'check' is not of the protocol's shape (the result: " },
    { name: 'neither result nor error', answer: (id) => JSON.stringify({ jsonrpc: '2.0', id }), says: 'its answer has neither a result nor an error' },
    { name: 'an error that is not an error object', answer: (id) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: 'x', message: { a: 1 } } }), says: 'its error answer is not a JSON-RPC error object' },
  ];

  for (const row of table) {
    it(`is one bad_answer in words, at once, never a schema dump: ${row.name}`, async () => {
      const path = await peer(row.answer);
      const client = await AgentClient.connect({ socketPath: path, reconnect: false, requestTimeoutMs: 60_000 });
      cleanups.push(() => client.close());
      const err = await rejection(client.check(UNKNOWN_PROJECT), isAgentError);
      expect(err.code).toBe('bad_answer');
      expect(err.message).toContain(`the agent's answer could not be read: ${row.says}`);
      expect(err.message).not.toMatch(/SECRET|"code"|\[\s*\{|ZodError|\n/);
    });
  }

  it('hello, list and offline_request of the wrong shape too', async () => {
    const path = await peer((id, method) => JSON.stringify({ jsonrpc: '2.0', id, result: method === 'list' ? { licenses: 'many' } : { protocol: 'one' } }));
    const client = await AgentClient.connect({ socketPath: path, reconnect: false });
    cleanups.push(() => client.close());
    expect(await rejection(client.hello(), isAgentError)).toMatchObject({ code: 'bad_answer', message: expect.stringContaining("its answer to 'hello' is not of the protocol's shape (protocol: ") });
    expect(await rejection(client.list(), isAgentError)).toMatchObject({ code: 'bad_answer', message: expect.stringContaining("its answer to 'list' is not of the protocol's shape (licenses: ") });
    expect(await rejection(client.offlineRequest(UNKNOWN_PROJECT), isAgentError)).toMatchObject({ code: 'bad_answer', message: expect.stringContaining("'offline_request'") });
  });
});
