// pnpm package (the root package.json runs it with --build): see build.mjs and packaging/README.md.
import { spawn } from 'node:child_process';
import { abandonRelease, packageRelease, parseOptions, USAGE } from './build.mjs';
import { PackageError } from './errors.mjs';
import { ROOT } from './root.mjs';

/** `pnpm build`, its output shown as it comes: only after the options were found good. */
function buildProject() {
  return new Promise((resolve, reject) => {
    const child = spawn('pnpm', ['build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', (err) => reject(new PackageError(`could not run "pnpm build" (${err.code ?? err.message}); is pnpm on the PATH?`)));
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new PackageError(`"pnpm build" failed (${signal ?? `exit ${code}`}); see its output above, fix it and run again`))));
  });
}

// Ctrl-C ends the process without reaching packageRelease's clean-up: the partial folder goes here.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    abandonRelease();
    process.exit(130);
  });
}

try {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) process.stdout.write(USAGE + '\n');
  else {
    if (options.build) await buildProject();
    await packageRelease(options);
  }
} catch (err) {
  if (!(err instanceof PackageError)) throw err;
  process.stderr.write(`pnpm package: ${err.message}\n`);
  process.exitCode = err.usage ? 2 : 1;
}
