// The one way packaging runs a tool (npm, tar, makensis, osslsigncode, node for the blob): as
// promisify(execFile), and remembered while it runs, so an interrupted build can stop them, and
// wait for them to be gone, before it removes its partial folder (a tool still running would
// write into it again).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const running = new Set();
const execFileAsync = promisify(execFile);
let stopping = false;

/** Runs `file` with `args`; resolves to `{stdout, stderr}`, rejects as execFile does. */
export function run(file, args, options) {
  if (stopping) return Promise.reject(new Error('the build was interrupted'));
  const pending = execFileAsync(file, args, options);
  const child = pending.child;
  running.add(child);
  child.once('exit', () => running.delete(child));
  return pending;
}

/**
 * Ends every tool still running (an interrupted build) and starts no other, synchronously: the
 * caller is a signal handler that must not give the build's own code a turn to write more. Waits
 * (at most `waitMs`) until each tool is dead: a zombie on Linux (/proc), elsewhere a short pause.
 */
export function stopTools(waitMs = 3000) {
  stopping = true;
  const pids = [...running].map((child) => child.pid).filter((pid) => pid !== undefined);
  for (const child of running) child.kill('SIGKILL');
  running.clear();
  const until = Date.now() + waitMs;
  const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  if (process.platform !== 'linux') {
    if (pids.length > 0) pause(200);
    return;
  }
  const dead = (pid) => {
    try {
      return / [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/\(.*\)/, '()'));
    } catch {
      return true; // gone
    }
  };
  while (pids.some((pid) => !dead(pid)) && Date.now() < until) pause(10);
}
