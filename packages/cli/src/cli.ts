#!/usr/bin/env node
import { run } from './program.js';

// Ctrl-C: the first one asks the running command to stop after the request in flight (it then
// reports what was done and exits 130); a second one stops at once.
const controller = new AbortController();
// A reader that stops early (`| head`) is not a failure: what it wanted was written.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}
let interrupts = 0;
process.on('SIGINT', () => {
  interrupts += 1;
  if (interrupts > 1) process.exit(130);
  controller.abort();
});

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }, controller.signal).then((code) => {
  process.exitCode = controller.signal.aborted && code === 0 ? 130 : code;
});
