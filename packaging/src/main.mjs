// pnpm package (the root package.json runs "pnpm build" first): see build.mjs and packaging/README.md.
import { abandonRelease, packageRelease, parseOptions, USAGE } from './build.mjs';
import { PackageError } from './errors.mjs';

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
  else await packageRelease(options);
} catch (err) {
  if (!(err instanceof PackageError)) throw err;
  process.stderr.write(`pnpm package: ${err.message}\n`);
  process.exitCode = err.usage ? 2 : 1;
}
