import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { asOtherUser, OTHER_UID } from './other-user.js';

export { OTHER_UID, otherUserUnavailable } from './other-user.js';


// The other user's program: listens on the path, answers every line as a convincing agent would
// (a valid license), and reports each connection and every byte it receives on stdout.
const LISTENER = `
const net = require('node:net');
const path = process.argv[1];
let n = 0;
process.umask(0);
const server = net.createServer((s) => {
  const id = ++n;
  console.log(JSON.stringify({ event: 'conn', id }));
  let buf = '';
  s.on('data', (d) => {
    console.log(JSON.stringify({ event: 'data', id, bytes: d.length, text: d.toString('utf8') }));
    buf += d.toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let req = {};
      try { req = JSON.parse(line); } catch {}
      const pid = (req.params && req.params.project_id) || '00000000-0000-4000-8000-000000000000';
      const state = { project_id: pid, valid: true, reason: null, source: 'online', code_hint: 'fake…fake', activations: 1, max_activations: 9, validated_at: null, grace_until: null, next_check_at: null };
      const result = req.method === 'hello' ? { protocol: 1, agent: '9.9.9', namespace: 'squatted' } : req.method === 'list' ? { licenses: [state] } : state;
      s.write(JSON.stringify({ jsonrpc: '2.0', id: req.id === undefined ? null : req.id, result }) + '\\n');
    }
  });
  s.on('error', () => {});
});
server.listen(path, () => console.log(JSON.stringify({ event: 'ready', uid: process.getuid() })));
process.on('SIGTERM', () => process.exit(0));
`;

interface ListenerEvent {
  event: 'ready' | 'conn' | 'data';
  id?: number;
  bytes?: number;
  text?: string;
  uid?: number;
}

/** Another user's listener on a socket path, and what it received. */
export interface Squatter {
  child: ChildProcess;
  /**
   * What reached the listener before this call, with nothing left in flight: the test connects
   * itself and sends a marker, and what came before the marker's connection was accepted is the
   * answer (a listener accepts connections in order).
   */
  received(): Promise<{ connections: number; bytes: number; text: string }>;
  stop(): Promise<void>;
}

/**
 * Starts a listener as uid 65534 (`setpriv --reuid=65534 --regid=65534 --clear-groups`) on
 * `socketPath`, whose folder the test has prepared (the other user must be able to create the
 * socket there). Resolves once it listens; stop it with `stop()`.
 *
 * @example
 * const s = await squatSocket('/tmp/acme-0/agent.sock');
 * expect((await s.received()).bytes).toBe(0);
 */
export async function squatSocket(socketPath: string): Promise<Squatter> {
  const [file, args] = asOtherUser([process.execPath, '-e', LISTENER, socketPath]);
  const child = spawn(file, args, { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  const events: ListenerEvent[] = [];
  const waiters: Array<() => void> = [];
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      events.push(JSON.parse(out.slice(0, nl)) as ListenerEvent);
      out = out.slice(nl + 1);
    }
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const until = (what: string, ok: () => boolean): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (ok()) return resolve();
        if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`the other user's listener ended before ${what}: ${err}`));
        waiters.push(check);
      };
      void exited.then(() => check());
      check();
    });
  await until('it listened', () => events.some((e) => e.event === 'ready'));
  const ready = events.find((e) => e.event === 'ready');
  if (ready?.uid !== OTHER_UID) throw new Error(`the listener runs as uid ${ready?.uid}, not ${OTHER_UID}`);
  return {
    child,
    async received() {
      const marker = `MARK-${Date.now()}-${Math.random()}`;
      const probe = createConnection(socketPath);
      probe.on('error', () => undefined);
      probe.write(marker + '\n');
      try {
        await until('the marker arrived', () => events.some((e) => e.event === 'data' && e.text?.includes(marker)));
      } finally {
        probe.destroy();
      }
      const markerConn = events.find((e) => e.event === 'data' && e.text?.includes(marker))?.id as number;
      const before = events.filter((e) => e.id !== undefined && e.id < markerConn);
      const data = before.filter((e) => e.event === 'data');
      return { connections: before.filter((e) => e.event === 'conn').length, bytes: data.reduce((n, e) => n + (e.bytes ?? 0), 0), text: data.map((e) => e.text).join('') };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A peer on a Unix socket that answers each request line with `answer(id, method)` (one line):
 * an agent that speaks something else, for the tests of answers a client cannot read. Close it
 * with `server.close()`.
 *
 * @example
 * const server = await answeringPeer(path, (id) => JSON.stringify({ jsonrpc: '2.0', id, result: null }));
 */
export async function answeringPeer(path: string, answer: (id: unknown, method: string) => string): Promise<Server> {
  const server = createServer((s: Socket) => {
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const req = JSON.parse(buf.slice(0, nl)) as { id: unknown; method: string };
        buf = buf.slice(nl + 1);
        s.write(answer(req.id, req.method) + '\n');
      }
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}
