// The one way packaging runs a tool (npm, tar, makensis, osslsigncode, node for the blob): as
// promisify(execFile), and remembered while it runs, so an interrupted build can stop them before
// it removes its partial folder (a tool still running would write into it again).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const running = new Set();
const execFileAsync = promisify(execFile);

/** Runs `file` with `args`; resolves to `{stdout, stderr}`, rejects as execFile does. */
export function run(file, args, options) {
  const pending = execFileAsync(file, args, options);
  const child = pending.child;
  running.add(child);
  child.once('exit', () => running.delete(child));
  return pending;
}

/** Ends every tool still running (an interrupted build), at once. */
export function stopTools() {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}
