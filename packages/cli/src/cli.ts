#!/usr/bin/env node
import { programName } from '@plugin-license/licensing/executable';
import { OUTPUT_REPORTED, outputFailed } from './exit.js';
import { run } from './program.js';

// Ctrl-C: the first one asks the running command to stop after the request in flight (it then
// reports what was done and exits 130); a second one stops at once.
const controller = new AbortController();
// A reader that stops early (`| head`) is not a failure: what it wanted was written. Any other
// failure to write (a pipe or terminal that breaks) ends the command with one line, never a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if ((err as unknown as Record<symbol, unknown>)[OUTPUT_REPORTED] === true) return; // the command says it, with what it had done
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (stream === process.stdout) {
      try {
        process.stderr.write(`${programName()}: ${outputFailed(err).message}\n`);
      } catch {
        // stderr is gone too
      }
    }
    process.exit(1);
  });
}
// SIGTERM (a service manager, a CI runner cancelling a job) is asked like Ctrl-C. A second one
// stops at once, except inside a step whose result must be recorded (a code the service just
// created, and its row): then right after that step.
let interrupts = 0;
let holding = 0;
let exitWhenFree = false;
const hold = async <T>(task: () => Promise<T>): Promise<T> => {
  holding += 1;
  try {
    return await task();
  } finally {
    holding -= 1;
    if (holding === 0 && exitWhenFree) process.exit(130);
  }
};
const args = process.argv.slice(2);
// `agent run` is a service: it stops itself, gracefully and with exit 0, on SIGTERM.
const agentRuns = args[args.indexOf('agent') + 1] === 'run' && args.includes('agent');
for (const signal of agentRuns ? (['SIGINT'] as const) : (['SIGINT', 'SIGTERM'] as const)) {
  process.on(signal, () => {
    interrupts += 1;
    if (interrupts > 1) {
      if (holding === 0) process.exit(130);
      exitWhenFree = true;
      return;
    }
    controller.abort();
  });
}

void run(args, { stdout: process.stdout, stderr: process.stderr, env: process.env }, controller.signal, hold).then((code) => {
  process.exitCode = controller.signal.aborted && code === 0 ? 130 : code;
  // Interrupted and reported: a wait still pending in the system (opening a pipe that has no
  // writer yet) must not hold the process.
  if (controller.signal.aborted) setTimeout(() => process.exit(), 200).unref();
});
